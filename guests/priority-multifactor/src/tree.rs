//! The association tree (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` and src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`): accounts and users with their
//! shares, usage and the fair-share figures derived from them.
//!
//! * **Fair-share parent** (`fs_parent`): the nearest ancestor not marked
//!   `FairShare=parent`. The children of a `FairShare=parent` account are
//!   attached to that ancestor's level (its `fs_children`), next to the
//!   account itself, which keeps no level of its own.
//! * **Level shares**: the sum of the raw shares of a level, where entries
//!   marked `FairShare=parent` count 0.
//! * **Normalised shares**: classic multiplies `shares / level_shares` down
//!   the chain of fair-share parents; Fair Tree uses its own level only. A
//!   `FairShare=parent` association copies its fair-share parent's value.
//!   The root's is 1.
//! * **Usage**: an account's usage is the sum of its users' (Slurm's
//!   association manager rebuilds it whenever the tree changes, and adds
//!   every charge up the tree between changes).
//!
//! Updates are incremental ([`Tree::apply`]) and atomic: a batch that would
//! leave a dangling parent, a user with children, a loop or a second root
//! is refused with `EINVAL` and the tree is left as it was.

use std::collections::{BTreeMap, VecDeque};

use slurm_wasm_sdk::Error;

use crate::usage::{TresSeconds, Usage};

/// `FairShare=` of an association.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    Raw(u32),
    /// `FairShare=parent`: compete as part of the fair-share parent.
    Parent,
}

/// An association as the controller describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocSpec {
    pub id: u32,
    /// None for the root.
    pub parent: Option<u32>,
    pub account: String,
    /// Set for user associations.
    pub user: Option<String>,
    pub user_id: Option<u32>,
    pub partition: Option<String>,
    pub shares: Shares,
    /// `Priority=` (association factor); None when unset.
    pub priority: Option<u32>,
}

/// An association to insert or change, with the accumulators a new one
/// starts from (as slurmdbd loaded them).
#[derive(Debug, Clone, PartialEq)]
pub struct NewAssoc {
    pub spec: AssocSpec,
    pub usage: Usage,
    pub run_secs: TresSeconds,
}

/// One incremental change.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// Insert, or change an existing association's settings. An existing
    /// association keeps the usage and run-seconds the plugin accumulated:
    /// the record's are read only for a new one.
    Upsert(NewAssoc),
    /// Remove the association; refused when it is unknown or keeps children.
    Remove(u32),
}

/// The fair-share figures of an association (`assoc->usage`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Level shares of the level this association belongs to.
    pub level_shares: u64,
    pub shares_norm: f64,
    /// `usage_raw / root usage_raw`, capped at 1, as last computed.
    pub usage_norm: f64,
    /// Effective usage; None is Slurm's NO_VAL (classic users are computed
    /// when first needed).
    pub usage_efctv: Option<f64>,
    pub fs_factor: f64,
    /// Fair Tree's Level FS (infinite for no usage).
    pub level_fs: Option<f64>,
}

/// An association in the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Assoc {
    pub spec: AssocSpec,
    pub usage: Usage,
    pub run_secs: TresSeconds,
    pub figures: Figures,
    children: Vec<u32>,
    fs_parent: Option<u32>,
    fs_children: Vec<u32>,
}

impl Assoc {
    fn new(new: NewAssoc) -> Assoc {
        Assoc {
            spec: new.spec,
            usage: new.usage,
            run_secs: new.run_secs,
            figures: Figures::default(),
            children: Vec::new(),
            fs_parent: None,
            fs_children: Vec::new(),
        }
    }

    pub fn is_user(&self) -> bool {
        self.spec.user.is_some()
    }

    /// Marked `FairShare=parent` (never true of the root).
    pub fn uses_parent(&self) -> bool {
        self.spec.shares == Shares::Parent && self.spec.parent.is_some()
    }

    /// Raw shares; `FairShare=parent` counts 0.
    pub fn shares_raw(&self) -> u32 {
        match self.spec.shares {
            Shares::Raw(s) => s,
            Shares::Parent => 0,
        }
    }

    /// The nearest ancestor not marked `FairShare=parent`; None for the root.
    pub fn fs_parent(&self) -> Option<u32> {
        self.fs_parent
    }

    /// The level below this association: its children, with the children
    /// of those marked `FairShare=parent` in their place's level too.
    pub fn fs_children(&self) -> &[u32] {
        &self.fs_children
    }
}

/// The association tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree {
    assocs: BTreeMap<u32, Assoc>,
    root: Option<u32>,
    /// Every association, parents before children (breadth first).
    top_down: Vec<u32>,
    user_count: u32,
    max_priority: u32,
}

impl Tree {
    /// Applies a batch of updates, all or nothing, and recomputes the
    /// derived values (links, level shares, normalised shares for Fair
    /// Tree or classic, account usage).
    pub fn apply(&mut self, updates: Vec<Update>, fair_tree: bool) -> Result<(), Error> {
        let mut assocs = self.assocs.clone();
        for update in updates {
            match update {
                Update::Upsert(new) => match assocs.get_mut(&new.spec.id) {
                    Some(existing) => existing.spec = new.spec,
                    None => {
                        assocs.insert(new.spec.id, Assoc::new(new));
                    }
                },
                Update::Remove(id) => {
                    if assocs.remove(&id).is_none() {
                        return Err(Error::invalid(format!(
                            "cannot remove association {id}: no such association"
                        )));
                    }
                }
            }
        }
        *self = Tree::build(assocs, fair_tree)?;
        Ok(())
    }

    /// A tree of `assocs` with every derived value computed; fails like
    /// [`Tree::apply`].
    fn build(mut assocs: BTreeMap<u32, Assoc>, fair_tree: bool) -> Result<Tree, Error> {
        let root = find_root(&assocs)?;
        for a in assocs.values_mut() {
            a.children.clear();
            a.fs_children.clear();
            a.fs_parent = None;
        }
        let links: Vec<(u32, u32)> = assocs
            .values()
            .filter_map(|a| a.spec.parent.map(|p| (a.spec.id, p)))
            .collect();
        for &(id, parent) in &links {
            let Some(p) = assocs.get_mut(&parent) else {
                return Err(Error::invalid(format!(
                    "association {id}: parent {parent} does not exist"
                )));
            };
            if p.is_user() {
                return Err(Error::invalid(format!(
                    "association {id}: parent {parent} is a user association, which cannot have children"
                )));
            }
            p.children.push(id);
        }
        let top_down = breadth_first(&assocs, root);
        if top_down.len() != assocs.len() {
            return Err(loop_error(&assocs, &top_down));
        }
        let mut tree = Tree {
            user_count: assocs.values().filter(|a| a.is_user()).count() as u32,
            max_priority: assocs
                .values()
                .filter_map(|a| a.spec.priority)
                .max()
                .unwrap_or(0),
            assocs,
            root,
            top_down,
        };
        tree.link_levels();
        tree.normalise_shares(fair_tree);
        tree.sum_account_usage();
        Ok(tree)
    }

    /// Fair-share parents, levels and level shares.
    fn link_levels(&mut self) {
        for i in 0..self.top_down.len() {
            let id = self.top_down[i];
            let Some(parent) = self.assocs[&id].spec.parent else {
                continue;
            };
            let p = &self.assocs[&parent];
            let fs_parent = if p.uses_parent() {
                p.fs_parent
                    .expect("a non-root association has a fair-share parent")
            } else {
                parent
            };
            self.assocs.get_mut(&id).expect("listed").fs_parent = Some(fs_parent);
            self.assocs
                .get_mut(&fs_parent)
                .expect("linked")
                .fs_children
                .push(id);
        }
        for i in 0..self.top_down.len() {
            let id = self.top_down[i];
            let level = &self.assocs[&id].fs_children;
            let level_shares: u64 = level
                .iter()
                .map(|c| u64::from(self.assocs[c].shares_raw()))
                .sum();
            for c in level.clone() {
                self.assocs
                    .get_mut(&c)
                    .expect("linked")
                    .figures
                    .level_shares = level_shares;
            }
        }
    }

    /// Normalised shares of every association, Fair Tree's or classic's.
    pub fn normalise_shares(&mut self, fair_tree: bool) {
        for i in 0..self.top_down.len() {
            let id = self.top_down[i];
            let a = &self.assocs[&id];
            let norm = match a.fs_parent {
                None => 1.0,
                Some(f) if a.uses_parent() => self.assocs[&f].figures.shares_norm,
                Some(f) => {
                    let level = a.figures.level_shares;
                    let own = if level == 0 {
                        0.0
                    } else {
                        f64::from(a.shares_raw()) / level as f64
                    };
                    if fair_tree {
                        own
                    } else {
                        own * self.assocs[&f].figures.shares_norm
                    }
                }
            };
            self.assocs
                .get_mut(&id)
                .expect("listed")
                .figures
                .shares_norm = norm;
        }
    }

    /// Sets each account's usage and run-seconds to the sum of its users'.
    fn sum_account_usage(&mut self) {
        for a in self.assocs.values_mut().filter(|a| !a.is_user()) {
            a.usage = Usage::default();
            a.run_secs.clear();
        }
        for i in (0..self.top_down.len()).rev() {
            let id = self.top_down[i];
            let Some(parent) = self.assocs[&id].spec.parent else {
                continue;
            };
            let (usage, run_secs) = {
                let a = &self.assocs[&id];
                (a.usage.clone(), a.run_secs.clone())
            };
            let p = self.assocs.get_mut(&parent).expect("linked");
            p.usage.add_usage(&usage);
            for (name, secs) in run_secs {
                let v = p.run_secs.entry(name).or_default();
                *v = v.saturating_add(secs);
            }
        }
    }

    pub fn get(&self, id: u32) -> Option<&Assoc> {
        self.assocs.get(&id)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut Assoc> {
        self.assocs.get_mut(&id)
    }

    /// Every association, by ascending id.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &Assoc> {
        self.assocs.values()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Assoc> {
        self.assocs.values_mut()
    }

    pub fn root(&self) -> Option<u32> {
        self.root
    }

    /// Every association id, parents before children.
    pub fn top_down(&self) -> &[u32] {
        &self.top_down
    }

    /// Number of user associations (Fair Tree's `g_user_assoc_count`).
    pub fn user_count(&self) -> u32 {
        self.user_count
    }

    /// The largest association `Priority=` (0 when none is set).
    pub fn max_priority(&self) -> u32 {
        self.max_priority
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.assocs.len()
    }

    /// `id` and its ancestors up to the root; empty for an unknown id.
    pub fn lineage(&self, id: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut next = self.assocs.get(&id).map(|_| id);
        while let Some(id) = next {
            out.push(id);
            next = self.assocs[&id].spec.parent;
        }
        out
    }

    /// `usage_raw / root usage_raw`, capped at 1; 0 when the root has none.
    pub fn usage_norm(&self, id: u32) -> f64 {
        let root_usage = self.root.map_or(0.0, |r| self.assocs[&r].usage.raw);
        match self.assocs.get(&id) {
            Some(a) if root_usage > 0.0 => (a.usage.raw / root_usage).min(1.0),
            _ => 0.0,
        }
    }
}

/// The one association without a parent (None for an empty tree).
fn find_root(assocs: &BTreeMap<u32, Assoc>) -> Result<Option<u32>, Error> {
    let mut roots = assocs.values().filter(|a| a.spec.parent.is_none());
    let root = roots.next().map(|a| a.spec.id);
    if let Some(second) = roots.next() {
        return Err(Error::invalid(format!(
            "associations {} and {} both have no parent: the tree has a single root",
            root.expect("a first root"),
            second.spec.id
        )));
    }
    match root {
        None if !assocs.is_empty() => {
            let id = assocs.keys().next().expect("not empty");
            Err(Error::invalid(format!(
                "no root association: every association has a parent (the chain from {id} loops)"
            )))
        }
        _ => Ok(root),
    }
}

fn breadth_first(assocs: &BTreeMap<u32, Assoc>, root: Option<u32>) -> Vec<u32> {
    let mut order = Vec::with_capacity(assocs.len());
    let mut queue: VecDeque<u32> = root.into_iter().collect();
    while let Some(id) = queue.pop_front() {
        order.push(id);
        queue.extend(assocs[&id].children.iter().copied());
    }
    order
}

/// The error for associations the root cannot reach: their parents loop.
fn loop_error(assocs: &BTreeMap<u32, Assoc>, reached: &[u32]) -> Error {
    let start = assocs
        .keys()
        .copied()
        .find(|id| !reached.contains(id))
        .expect("some association is unreachable");
    let mut chain = vec![start];
    let mut id = start;
    while let Some(parent) = assocs[&id].spec.parent {
        let seen = chain.contains(&parent);
        chain.push(parent);
        if seen {
            break;
        }
        id = parent;
    }
    let path: Vec<String> = chain.iter().map(u32::to_string).collect();
    Error::invalid(format!(
        "association {start}: its parents loop ({})",
        path.join(" -> ")
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An association for tests: user when `user` is set, usage `usage`.
    pub(crate) fn assoc(
        id: u32,
        parent: Option<u32>,
        account: &str,
        user: Option<&str>,
        shares: Shares,
        usage: f64,
    ) -> Update {
        Update::Upsert(NewAssoc {
            spec: AssocSpec {
                id,
                parent,
                account: account.into(),
                user: user.map(Into::into),
                user_id: None,
                partition: None,
                shares,
                priority: None,
            },
            usage: Usage {
                raw: usage,
                ..Usage::default()
            },
            run_secs: TresSeconds::new(),
        })
    }

    fn small() -> Tree {
        let mut t = Tree::default();
        t.apply(
            vec![
                assoc(1, None, "root", None, Shares::Raw(1), 0.0),
                assoc(2, Some(1), "a", None, Shares::Raw(3), 99.0),
                assoc(3, Some(2), "a", Some("u1"), Shares::Raw(1), 10.0),
                assoc(4, Some(2), "a", Some("u2"), Shares::Raw(1), 30.0),
                assoc(5, Some(1), "b", None, Shares::Raw(1), 0.0),
                assoc(6, Some(5), "b", Some("u3"), Shares::Raw(1), 60.0),
            ],
            false,
        )
        .unwrap();
        t
    }

    #[test]
    fn account_usage_is_the_sum_of_its_users() {
        let t = small();
        assert_eq!(
            t.get(2).unwrap().usage.raw,
            40.0,
            "the record's 99 is replaced"
        );
        assert_eq!(t.get(1).unwrap().usage.raw, 100.0);
        assert_eq!(t.usage_norm(4), 0.3);
        assert_eq!(t.user_count(), 3);
        assert_eq!(t.lineage(3), vec![3, 2, 1]);
        assert!(t.lineage(42).is_empty());
    }

    #[test]
    fn classic_and_fair_tree_normalised_shares() {
        let mut t = small();
        assert_eq!(t.get(2).unwrap().figures.shares_norm, 0.75);
        assert_eq!(t.get(3).unwrap().figures.shares_norm, 0.375);
        t.normalise_shares(true);
        assert_eq!(t.get(3).unwrap().figures.shares_norm, 0.5);
        assert_eq!(t.get(1).unwrap().figures.shares_norm, 1.0);
    }

    #[test]
    fn fairshare_parent_moves_children_up_a_level() {
        let mut t = small();
        t.apply(
            vec![
                assoc(7, Some(2), "ap", None, Shares::Parent, 0.0),
                assoc(8, Some(7), "ap", Some("u4"), Shares::Raw(4), 5.0),
            ],
            true,
        )
        .unwrap();
        assert_eq!(t.get(8).unwrap().fs_parent(), Some(2));
        assert_eq!(t.get(2).unwrap().fs_children(), &[3, 4, 7, 8]);
        assert!(t.get(7).unwrap().fs_children().is_empty());
        assert_eq!(t.get(3).unwrap().figures.level_shares, 6, "1 + 1 + 0 + 4");
        assert_eq!(t.get(2).unwrap().usage.raw, 45.0);
    }

    #[test]
    fn upsert_keeps_accumulated_usage_and_remove_works() {
        let mut t = small();
        t.get_mut(3).unwrap().usage.raw = 12.0;
        t.apply(
            vec![assoc(3, Some(2), "a", Some("u1"), Shares::Raw(5), 0.0)],
            false,
        )
        .unwrap();
        assert_eq!(t.get(3).unwrap().usage.raw, 12.0);
        assert_eq!(t.get(3).unwrap().spec.shares, Shares::Raw(5));
        t.apply(vec![Update::Remove(6), Update::Remove(5)], false)
            .unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t.get(1).unwrap().usage.raw, 42.0);
    }

    #[test]
    fn refused_batches_leave_the_tree_unchanged() {
        let t0 = small();
        let cases: Vec<(Vec<Update>, &str)> = vec![
            (
                vec![assoc(9, Some(42), "x", None, Shares::Raw(1), 0.0)],
                "association 9: parent 42 does not exist",
            ),
            (
                vec![Update::Remove(2)],
                "association 3: parent 2 does not exist",
            ),
            (vec![Update::Remove(77)], "no such association"),
            (
                vec![assoc(9, None, "x", None, Shares::Raw(1), 0.0)],
                "associations 1 and 9 both have no parent",
            ),
            (
                vec![assoc(9, Some(3), "x", None, Shares::Raw(1), 0.0)],
                "parent 3 is a user association",
            ),
            (
                vec![
                    assoc(2, Some(5), "a", None, Shares::Raw(3), 0.0),
                    assoc(5, Some(2), "b", None, Shares::Raw(1), 0.0),
                ],
                "its parents loop (2 -> 5 -> 2)",
            ),
        ];
        for (batch, expected) in cases {
            let mut t = t0.clone();
            let e = t.apply(batch, false).unwrap_err();
            assert_eq!(e.code, slurm_wasm_sdk::codes::EINVAL);
            assert!(e.message.contains(expected), "{e}");
            assert_eq!(t, t0);
        }
    }
}
