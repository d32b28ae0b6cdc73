//! The QOS table: priorities (QOS factor), usage factors, NoDecay, and the
//! usage charged to each QOS.
//!
//! Jobs name their QOS; names are matched case-insensitively, as Slurm
//! stores them lower-case. Updates are atomic: a batch that removes an
//! unknown QOS or gives two QOS the same name is refused with `EINVAL` and
//! the table is left as it was.

use std::collections::BTreeMap;

use slurm_wasm_sdk::Error;

use crate::usage::{TresSeconds, Usage};

/// A QOS as the controller describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct QosSpec {
    pub id: u32,
    pub name: String,
    /// `Priority=` (QOS factor).
    pub priority: u32,
    /// `UsageFactor`; negative values mean "not set" (factor 1).
    pub usage_factor: f64,
    /// `Flags=NoDecay`.
    pub no_decay: bool,
}

impl QosSpec {
    /// The factor applied to charges: `UsageFactor` when set (>= 0), else 1.
    pub fn charge_factor(&self) -> f64 {
        if self.usage_factor >= 0.0 {
            self.usage_factor
        } else {
            1.0
        }
    }
}

/// A QOS with its accumulators.
#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    pub spec: QosSpec,
    pub usage: Usage,
    pub run_secs: TresSeconds,
}

/// One incremental change.
#[derive(Debug, Clone, PartialEq)]
pub enum QosUpdate {
    /// Insert, or change an existing QOS's settings (keeping its usage and
    /// run-seconds; the record's run-seconds are read only for a new QOS).
    Upsert(QosSpec, TresSeconds),
    Remove(u32),
}

/// The QOS table, by id, with a name index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QosTable {
    entries: BTreeMap<u32, Qos>,
    names: BTreeMap<String, u32>,
    max_priority: u32,
}

impl QosTable {
    /// Applies a batch, all or nothing.
    pub fn apply(&mut self, updates: Vec<QosUpdate>) -> Result<(), Error> {
        let mut entries = self.entries.clone();
        for update in updates {
            match update {
                QosUpdate::Upsert(spec, run_secs) => match entries.get_mut(&spec.id) {
                    Some(existing) => existing.spec = spec,
                    None => {
                        entries.insert(
                            spec.id,
                            Qos {
                                spec,
                                usage: Usage::default(),
                                run_secs,
                            },
                        );
                    }
                },
                QosUpdate::Remove(id) => {
                    if entries.remove(&id).is_none() {
                        return Err(Error::invalid(format!(
                            "cannot remove QOS {id}: no such QOS"
                        )));
                    }
                }
            }
        }
        *self = QosTable::from_entries(entries.into_values())?;
        Ok(())
    }

    /// A table of `entries`; fails when two share a name or an id.
    pub fn from_entries(entries: impl IntoIterator<Item = Qos>) -> Result<QosTable, Error> {
        let mut table = QosTable::default();
        for qos in entries {
            let name = qos.spec.name.to_ascii_lowercase();
            if let Some(other) = table.names.insert(name, qos.spec.id) {
                return Err(Error::invalid(format!(
                    "QOS {} and {other} are both named `{}`",
                    qos.spec.id, qos.spec.name
                )));
            }
            if table.entries.contains_key(&qos.spec.id) {
                return Err(Error::invalid(format!(
                    "QOS id {} appears twice",
                    qos.spec.id
                )));
            }
            table.max_priority = table.max_priority.max(qos.spec.priority);
            table.entries.insert(qos.spec.id, qos);
        }
        Ok(table)
    }

    /// The QOS called `name` (any case).
    pub fn by_name(&self, name: &str) -> Option<&Qos> {
        self.names
            .get(&name.to_ascii_lowercase())
            .and_then(|id| self.entries.get(id))
    }

    pub fn by_name_mut(&mut self, name: &str) -> Option<&mut Qos> {
        let id = *self.names.get(&name.to_ascii_lowercase())?;
        self.entries.get_mut(&id)
    }

    /// The largest QOS priority (0 when there is none).
    pub fn max_priority(&self) -> u32 {
        self.max_priority
    }

    /// Every QOS, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Qos> {
        self.entries.values()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Qos> {
        self.entries.values_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: u32, name: &str, priority: u32) -> QosSpec {
        QosSpec {
            id,
            name: name.into(),
            priority,
            usage_factor: 1.0,
            no_decay: false,
        }
    }

    #[test]
    fn lookup_by_name_any_case_and_max_priority() {
        let mut t = QosTable::default();
        t.apply(vec![
            QosUpdate::Upsert(spec(1, "normal", 50), TresSeconds::new()),
            QosUpdate::Upsert(spec(2, "High", 100), TresSeconds::new()),
        ])
        .unwrap();
        assert_eq!(t.by_name("high").unwrap().spec.id, 2);
        assert_eq!(t.by_name("NORMAL").unwrap().spec.priority, 50);
        assert_eq!(t.max_priority(), 100);
        t.by_name_mut("normal").unwrap().usage.raw = 7.0;
        t.apply(vec![
            QosUpdate::Upsert(spec(1, "standard", 10), TresSeconds::new()),
            QosUpdate::Remove(2),
        ])
        .unwrap();
        assert!(t.by_name("normal").is_none());
        assert_eq!(t.by_name("standard").unwrap().usage.raw, 7.0, "usage kept");
        assert_eq!(t.max_priority(), 10);
    }

    #[test]
    fn refused_batches_change_nothing() {
        let mut t = QosTable::default();
        t.apply(vec![QosUpdate::Upsert(
            spec(1, "normal", 1),
            TresSeconds::new(),
        )])
        .unwrap();
        let before = t.clone();
        let e = t
            .apply(vec![QosUpdate::Upsert(
                spec(2, "Normal", 1),
                TresSeconds::new(),
            )])
            .unwrap_err();
        assert!(e.message.contains("both named"), "{e}");
        assert!(t.apply(vec![QosUpdate::Remove(9)]).is_err());
        assert_eq!(t, before);
    }

    #[test]
    fn usage_factor_unset_when_negative() {
        let mut s = spec(1, "a", 0);
        assert_eq!(s.charge_factor(), 1.0);
        s.usage_factor = 0.5;
        assert_eq!(s.charge_factor(), 0.5);
        s.usage_factor = -1.0;
        assert_eq!(s.charge_factor(), 1.0);
    }
}
