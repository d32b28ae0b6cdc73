//! Running recorded calls again: against another build of a plugin
//! (`slurm-wasm replay`), or as they happen, against a shadow
//! ([`crate::shadow`]).
//!
//! Each kind's handle is a [`Replayer`]: it decodes a [`CallRecord`]'s
//! arguments as its function takes them, makes the call, and compares its
//! answer with the recorded one ([`Verdict`]). Answers are compared as
//! values (`PartialEq` on the contract's records), failures by their kind
//! (and a plugin error's code): messages may differ between builds.
//!
//! Calls whose arguments or answers are plugin-side records (a select
//! plugin's nodeinfo and jobinfo, a gres plugin's epilog info) are handles
//! into one instance: they are neither recorded nor replayed. They pack and
//! unpack those records for Slurm's RPCs and change no decision.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::capabilities::clock::VirtualClock;
use crate::error::CallError;
use crate::recording::{CallRecord, Failure, Recording};

/// How a replayed call compares with the recorded one.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The same answer, or a failure of the same kind.
    Same,
    /// Another answer: each side as `{:?}` prints it, with the arguments.
    Differs {
        /// The call's arguments.
        args: String,
        /// The recorded side's answer (or failure).
        recorded: String,
        /// The replaying plugin's.
        replayed: String,
    },
}

/// A recorded call that could not be replayed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The recording is of another kind of plugin.
    #[error("a {recorded} recording cannot be replayed into a {kind} plugin")]
    Kind {
        /// The recording's kind.
        recorded: String,
        /// The replaying plugin's.
        kind: &'static str,
    },
    /// The kind has no such function (a recording of another kind, or of
    /// another contract).
    #[error("call {seq}: {kind} plugins have no function {function}")]
    UnknownFunction {
        /// The call's number.
        seq: u64,
        /// The replaying plugin's kind.
        kind: &'static str,
        /// The recorded function.
        function: String,
    },
    /// Its arguments or answer do not decode as the function's.
    #[error("call {seq} ({function}): {what} do not decode: {reason}")]
    Decode {
        /// The call's number.
        seq: u64,
        /// The recorded function.
        function: String,
        /// `arguments` or `answer`.
        what: &'static str,
        /// The decoder's message.
        reason: String,
    },
}

/// A plugin handle that can take recorded calls.
pub trait Replayer: Send + Sync {
    /// The plugin kind's name (`select`).
    fn kind(&self) -> &'static str;
    /// The plugin's type (`select/cons_tres`).
    fn plugin_type(&self) -> String;
    /// Makes `call` on the plugin and compares the answer.
    ///
    /// # Errors
    ///
    /// [`ReplayError`] when the call cannot be made at all; a plugin that
    /// fails is a failure to compare, not an error.
    fn replay(&self, call: &CallRecord) -> Result<Verdict, ReplayError>;
    /// Why the plugin takes no more calls (its failure policy disabled
    /// it), if it does not.
    fn out_of_service(&self) -> Option<String>;
}

/// Decodes `call`'s arguments as `A`, runs `run` with them and compares its
/// result with the recorded outcome, decoded as `R`. The kinds' dispatch
/// tables are made of these.
pub(crate) fn compare<A, R>(
    call: &CallRecord,
    run: impl FnOnce(A) -> Result<R, CallError>,
) -> Result<Verdict, ReplayError>
where
    A: DeserializeOwned + Debug,
    R: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let decode_error = |what: &'static str| {
        move |e: postcard::Error| ReplayError::Decode {
            seq: call.seq,
            function: call.function.clone(),
            what,
            reason: e.to_string(),
        }
    };
    let args: A = postcard::from_bytes(&call.args).map_err(decode_error("arguments"))?;
    let replayed = run(args);
    let same = match (&call.outcome, &replayed) {
        (Ok(bytes), Ok(answer)) => {
            let recorded: R = postcard::from_bytes(bytes).map_err(decode_error("answer"))?;
            recorded == *answer
        }
        (Err(failure), Err(error)) => failure.kind == Failure::from(error).kind,
        _ => false,
    };
    if same {
        return Ok(Verdict::Same);
    }
    let args: A = postcard::from_bytes(&call.args).map_err(decode_error("arguments"))?;
    let recorded = match &call.outcome {
        Ok(bytes) => format!(
            "{:?}",
            postcard::from_bytes::<R>(bytes).map_err(decode_error("answer"))?
        ),
        Err(failure) => format!("failed: {}", failure.message),
    };
    let replayed = match &replayed {
        Ok(answer) => format!("{answer:?}"),
        Err(error) => format!("failed: {error}"),
    };
    Ok(Verdict::Differs {
        args: format!("{args:?}"),
        recorded,
        replayed,
    })
}

/// One call whose replay differed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Divergence {
    /// The call's number in the recording.
    pub seq: u64,
    /// Its function.
    pub function: String,
    /// Its arguments, as `{:?}` prints them.
    pub args: String,
    /// The recorded (or active) plugin's answer.
    pub recorded: String,
    /// The replaying (or shadow) plugin's.
    pub replayed: String,
}

/// Divergences counted per function, the first few kept whole.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Divergences {
    /// Calls compared.
    pub compared: u64,
    /// Differing calls per function.
    pub by_function: BTreeMap<String, u64>,
    /// The numbers of every differing call, in order.
    pub calls: Vec<u64>,
    /// The first `keep` differing calls in full.
    pub first: Vec<Divergence>,
    /// How many to keep in full.
    #[serde(skip)]
    pub keep: usize,
}

impl Divergences {
    /// Keeping the first `keep` in full.
    pub fn keeping(keep: usize) -> Divergences {
        Divergences {
            keep,
            ..Divergences::default()
        }
    }

    /// Counts one compared call.
    pub fn add(&mut self, call: &CallRecord, verdict: Verdict) {
        self.compared += 1;
        if let Verdict::Differs {
            args,
            recorded,
            replayed,
        } = verdict
        {
            *self.by_function.entry(call.function.clone()).or_default() += 1;
            self.calls.push(call.seq);
            if self.first.len() < self.keep {
                self.first.push(Divergence {
                    seq: call.seq,
                    function: call.function.clone(),
                    args,
                    recorded,
                    replayed,
                });
            }
        }
    }

    /// Differing calls in all.
    pub fn total(&self) -> u64 {
        self.calls.len() as u64
    }
}

/// Runs every call of `recording` against `plugin`, each with the clock the
/// recorded call saw (`clock` must be the one `plugin`'s host answers with:
/// [`crate::Host::with_clock`]). Stops at the first call that cannot be
/// replayed.
///
/// # Errors
///
/// [`ReplayError`] for a recording of another kind, or a call whose
/// function or records this plugin's kind does not have.
pub fn run(
    recording: &Recording,
    plugin: &dyn Replayer,
    clock: &Arc<VirtualClock>,
    keep: usize,
) -> Result<Divergences, ReplayError> {
    if recording.header.kind != plugin.kind() {
        return Err(ReplayError::Kind {
            recorded: recording.header.kind.clone(),
            kind: plugin.kind(),
        });
    }
    let mut divergences = Divergences::keeping(keep);
    for call in &recording.calls {
        clock.set(call.clock);
        let verdict = plugin.replay(call)?;
        divergences.add(call, verdict);
    }
    Ok(divergences)
}

/// Calls, fuel and time of one function in a recording.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FunctionSummary {
    /// Calls made.
    pub calls: u64,
    /// Calls that failed.
    pub failed: u64,
    /// Fuel: median, 90th percentile, largest, sum.
    pub fuel: Distribution,
    /// Host time in microseconds: median, 90th percentile, largest, sum.
    pub micros: Distribution,
}

/// Median, 90th percentile (nearest rank), largest and sum of values.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Distribution {
    /// The median.
    pub p50: u64,
    /// The 90th percentile.
    pub p90: u64,
    /// The largest.
    pub max: u64,
    /// The sum.
    pub sum: u64,
}

impl Distribution {
    fn of(mut values: Vec<u64>) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        values.sort_unstable();
        let rank = |p: usize| values[(values.len() * p).div_ceil(100).max(1) - 1];
        Distribution {
            p50: rank(50),
            p90: rank(90),
            max: *values.last().expect("not empty"),
            sum: values.iter().sum(),
        }
    }
}

/// Per function: calls, failures, fuel and time.
pub fn summarise(recording: &Recording) -> BTreeMap<String, FunctionSummary> {
    let mut values: BTreeMap<&str, (u64, Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for call in &recording.calls {
        let entry = values.entry(&call.function).or_default();
        entry.0 += u64::from(call.outcome.is_err());
        entry.1.push(call.fuel);
        entry.2.push(call.micros);
    }
    values
        .into_iter()
        .map(|(function, (failed, fuel, micros))| {
            (
                function.to_string(),
                FunctionSummary {
                    calls: fuel.len() as u64,
                    failed,
                    fuel: Distribution::of(fuel),
                    micros: Distribution::of(micros),
                },
            )
        })
        .collect()
}

/// The dispatch table of a kind's handle: each arm names a contract
/// function, the tuple its arguments were recorded as, and the call.
macro_rules! replayer {
    ($Handle:ty, $kind:literal, |$p:ident| { $($name:literal => |$args:tt: $A:ty| -> $R:ty { $($call:tt)* }),* $(,)? }) => {
        impl crate::replay::Replayer for $Handle {
            fn kind(&self) -> &'static str {
                $kind
            }

            fn plugin_type(&self) -> String {
                self.identity().plugin_type
            }

            fn out_of_service(&self) -> Option<String> {
                self.core.disabled()
            }

            fn replay(
                &self,
                call: &crate::recording::CallRecord,
            ) -> Result<crate::replay::Verdict, crate::replay::ReplayError> {
                let $p = self;
                match call.function.as_str() {
                    $($name => crate::replay::compare(call, |$args: $A| -> Result<$R, crate::error::CallError> { $($call)* }),)*
                    _ => Err(crate::replay::ReplayError::UnknownFunction {
                        seq: call.seq,
                        kind: $kind,
                        function: call.function.clone(),
                    }),
                }
            }
        }
    };
}
pub(crate) use replayer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_take_nearest_ranks() {
        let d = Distribution::of((1..=10).collect());
        assert_eq!((d.p50, d.p90, d.max, d.sum), (5, 9, 10, 55));
        assert_eq!(Distribution::of(vec![]), Distribution::default());
        assert_eq!(Distribution::of(vec![7]).p90, 7);
    }
}
