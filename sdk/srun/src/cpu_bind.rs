//! `cpu_bind_type` bits (Slurm 22.05.8 slurm/slurm.h `cpu_bind_type_t`) and the
//! `--cpu-bind` option text srun turns into them (Slurm 22.05.8 src/common/slurm_resource_info.c `slurm_verify_cpu_bind`).
//!
//! The parser is srun's side of the contract: a launch request already
//! carries the bits and the expanded list. It is here so that a launcher (and
//! the tests) can build requests from the words users type.

use std::fmt;

/// `verbose`: print the binding of every task.
pub const VERBOSE: u32 = 0x1;
/// `threads`: generated masks bind to threads.
pub const TO_THREADS: u32 = 0x2;
/// `cores`: generated masks bind to whole cores.
pub const TO_CORES: u32 = 0x4;
/// `sockets`: generated masks bind to whole sockets.
pub const TO_SOCKETS: u32 = 0x8;
/// `ldoms`: generated masks bind to NUMA locality domains.
pub const TO_LDOMS: u32 = 0x10;
/// `none`: do not bind.
pub const NONE: u32 = 0x20;
/// `rank`: task `i` on CPU `i` (in Slurm 22.05; removed in 24.11).
pub const RANK: u32 = 0x40;
/// `map_cpu:<list>`: one OS CPU id per task.
pub const MAP: u32 = 0x80;
/// `mask_cpu:<list>`: one OS CPU mask per task; also what task/affinity
/// rewrites every generated binding into.
pub const MASK: u32 = 0x100;
/// `rank_ldom`: task `i` on locality domain `i`.
pub const LDRANK: u32 = 0x200;
/// `map_ldom:<list>`: one locality domain per task.
pub const LDMAP: u32 = 0x400;
/// `mask_ldom:<list>`: one locality domain mask per task.
pub const LDMASK: u32 = 0x800;
/// `one_thread`, or a node configured with `CPUs=` equal to its core count:
/// layouts use one thread per core.
pub const ONE_THREAD_PER_CORE: u32 = 0x2000;
/// `TaskPluginParam=autobind=threads`.
pub const AUTO_BIND_TO_THREADS: u32 = 0x4000;
/// `TaskPluginParam=autobind=cores`.
pub const AUTO_BIND_TO_CORES: u32 = 0x10000;
/// `TaskPluginParam=autobind=sockets`.
pub const AUTO_BIND_TO_SOCKETS: u32 = 0x20000;
/// `TaskPluginParam=SlurmdOffSpec`.
pub const SLURMD_OFF_SPEC: u32 = 0x40000;
/// Binding disabled (`CPU_BIND_OFF`).
pub const OFF: u32 = 0x80000;

/// The bind units (`bind_entity` in `lllp_distribution`).
pub const UNITS: u32 = TO_THREADS | TO_CORES | TO_SOCKETS | TO_LDOMS;
/// The manual modes (`bind_mode` in `lllp_distribution`).
pub const MODES: u32 = NONE | RANK | MAP | MASK | LDRANK | LDMAP | LDMASK;

/// Slurm's `slurm_sprint_cpu_bind_type`: the set flags as comma-separated
/// words in a fixed order (`SlurmdOffSpec` is not shown), `(null type)`
/// when none is set. Used in log lines
/// and in the "Entire node must be allocated for ..." error.
pub fn describe(flags: u32) -> String {
    const WORDS: [(u32, &str); 17] = [
        (VERBOSE, "verbose"),
        (TO_THREADS, "threads"),
        (TO_CORES, "cores"),
        (TO_SOCKETS, "sockets"),
        (TO_LDOMS, "ldoms"),
        (NONE, "none"),
        (RANK, "rank"),
        (MAP, "map_cpu"),
        (MASK, "mask_cpu"),
        (LDRANK, "rank_ldom"),
        (LDMAP, "map_ldom"),
        (LDMASK, "mask_ldom"),
        (ONE_THREAD_PER_CORE, "one_thread"),
        (AUTO_BIND_TO_THREADS, "autobind=threads"),
        (AUTO_BIND_TO_CORES, "autobind=cores"),
        (AUTO_BIND_TO_SOCKETS, "autobind=sockets"),
        (OFF, "off"),
    ];
    let words: Vec<&str> = WORDS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, word)| *word)
        .collect();
    if words.is_empty() {
        "(null type)".into()
    } else {
        words.join(",")
    }
}

/// What `--cpu-bind` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuBind {
    /// `cpu_bind_type` bits.
    pub flags: u32,
    /// The map or mask list, `value*count` repetitions expanded, `0x`
    /// prefixes of masks removed (srun sends it that way); empty for modes
    /// without a list.
    pub list: String,
}

/// The outcome of parsing `--cpu-bind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// The bits and list the words give.
    Bind(CpuBind),
    /// `help` was among the words: show [`HELP`] and launch nothing.
    Help,
}

/// Why `--cpu-bind` was refused (srun then exits with "Failed to parse
/// --cpu-bind= values.").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A word that is no binding option.
    Unrecognized(String),
    /// `map_cpu`, `mask_cpu`, `map_ldom` or `mask_ldom` without a list.
    MissingList(&'static str),
    /// A list entry with a character that is not a decimal digit (maps) or
    /// a hex digit (masks); `text` is the entry, or its `*count` part.
    BadNumber {
        /// The entry, or its `*count` part.
        text: String,
        /// The first character that is not a digit of its base.
        offending: char,
    },
    /// A `*count` that is not a positive number.
    BadMultiplier {
        /// The list's option (`map_cpu`, ...).
        kind: &'static str,
        /// The text after `*`.
        count: String,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Unrecognized(word) => {
                write!(f, "unrecognized --cpu-bind argument \"{word}\"")
            }
            ParseError::MissingList(kind) => {
                write!(f, "missing list for \"--cpu-bind={kind}:<list>\"")
            }
            ParseError::BadNumber { text, offending } => write!(
                f,
                "Failed to validate number: {text}, the offending character is {offending}"
            ),
            ParseError::BadMultiplier { kind, count } => {
                write!(f, "Invalid {kind} multiplier: {count}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// The words `--cpu-bind` understands, for `--cpu-bind=help`.
pub const HELP: &str = "\
CPU bind options:
    --cpu-bind=         Bind tasks to CPUs
        q[uiet]         bind quietly (default)
        v[erbose]       report each task's binding before it runs
        no[ne]          do not bind tasks to CPUs
        rank            bind task i to CPU i
        map_cpu:<list>  one CPU id per task: <cpuid1>,<cpuid2>,...
        mask_cpu:<list> one hex CPU mask per task: <mask1>,<mask2>,...
        rank_ldom       bind task i to locality domain i
        map_ldom:<list> one locality domain id per task
        mask_ldom:<list> one hex locality domain mask per task
        sockets         generated masks bind to whole sockets
        cores           generated masks bind to whole cores
        threads         generated masks bind to threads
        ldoms           generated masks bind to locality domains
        one_thread      use one thread per core
        help            show this message
    A list entry may be repeated with <value>*<count>.";

/// Parses `--cpu-bind`'s value the way srun 22.05 does, starting from no
/// flags.
///
/// Words are separated by commas, except that a comma followed by something
/// that looks like a number continues the current list (`map_cpu:0,1,cores`
/// is the list `0,1` and the unit `cores`). Words are case-insensitive; a
/// later mode replaces an earlier one, as does a later unit.
pub fn parse(arg: &str) -> Result<Parsed, ParseError> {
    let mut bind = CpuBind {
        flags: 0,
        list: String::new(),
    };
    for word in split_words(arg) {
        let lower = word.to_ascii_lowercase();
        let list_mode = |prefixes: &[&str]| prefixes.iter().any(|p| lower.starts_with(p));
        match lower.as_str() {
            "help" => return Ok(Parsed::Help),
            "q" | "quiet" => bind.flags &= !VERBOSE,
            "v" | "verbose" => bind.flags |= VERBOSE,
            "one_thread" => bind.flags |= ONE_THREAD_PER_CORE,
            "no" | "none" => set_mode(&mut bind, NONE),
            "rank" => set_mode(&mut bind, RANK),
            "rank_ldom" => set_mode(&mut bind, LDRANK),
            "socket" | "sockets" => set_unit(&mut bind, TO_SOCKETS),
            "core" | "cores" => set_unit(&mut bind, TO_CORES),
            "thread" | "threads" => set_unit(&mut bind, TO_THREADS),
            "ldom" | "ldoms" => set_unit(&mut bind, TO_LDOMS),
            _ if list_mode(&["map_cpu", "mapcpu"]) => {
                set_list_mode(&mut bind, MAP, "map_cpu", &word)?
            }
            _ if list_mode(&["mask_cpu", "maskcpu"]) => {
                set_list_mode(&mut bind, MASK, "mask_cpu", &word)?
            }
            _ if list_mode(&["map_ldom", "mapldom"]) => {
                set_list_mode(&mut bind, LDMAP, "map_ldom", &word)?
            }
            _ if list_mode(&["mask_ldom", "maskldom"]) => {
                set_list_mode(&mut bind, LDMASK, "mask_ldom", &word)?
            }
            _ => return Err(ParseError::Unrecognized(word)),
        }
    }
    Ok(Parsed::Bind(bind))
}

/// Splits at commas that do not continue a list (srun's `_isvalue` rule: a
/// comma continues a list when a digit follows it, or a run of hex digits
/// ending at a comma or at the end of the text).
fn split_words(arg: &str) -> Vec<String> {
    let bytes = arg.as_bytes();
    let mut words = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b',' && !looks_like_value(&bytes[i + 1..]) {
            words.push(arg[start..i].to_string());
            start = i + 1;
        }
    }
    words.push(arg[start..].to_string());
    words
}

fn looks_like_value(rest: &[u8]) -> bool {
    if rest.first().is_some_and(u8::is_ascii_digit) {
        return true;
    }
    let hex_run = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    matches!(rest.get(hex_run), None | Some(b','))
}

fn set_mode(bind: &mut CpuBind, mode: u32) {
    bind.flags = (bind.flags & !MODES) | mode;
    bind.list.clear();
}

fn set_unit(bind: &mut CpuBind, unit: u32) {
    bind.flags = (bind.flags & !UNITS) | unit;
}

/// `map_cpu:<list>` and friends: the list is what follows the first `:` or
/// `=`, up to the next one.
fn set_list_mode(
    bind: &mut CpuBind,
    mode: u32,
    kind: &'static str,
    word: &str,
) -> Result<(), ParseError> {
    set_mode(bind, mode);
    let list = word
        .split([':', '='])
        .nth(1)
        .filter(|list| !list.is_empty())
        .ok_or(ParseError::MissingList(kind))?;
    bind.list = expand_repetitions(list, kind)?;
    Ok(())
}

/// Expands `value*count` entries (`1*2,3` → `1,1,3`) and checks every value:
/// decimal digits for maps, hex digits (after an optional `0x`, which is
/// dropped) for masks. Empty entries are skipped.
fn expand_repetitions(list: &str, kind: &'static str) -> Result<String, ParseError> {
    let is_mask = kind.starts_with("mask");
    let valid = |c: char| {
        if is_mask {
            c.is_ascii_hexdigit()
        } else {
            c.is_ascii_digit()
        }
    };
    let check = |text: &str| match text.chars().find(|&c| !valid(c)) {
        Some(offending) => Err(ParseError::BadNumber {
            text: text.to_string(),
            offending,
        }),
        None => Ok(()),
    };
    let mut out: Vec<&str> = Vec::new();
    for entry in list.split(',').filter(|e| !e.is_empty()) {
        let entry = match entry.strip_prefix("0x") {
            Some(rest) if is_mask => rest,
            _ => entry,
        };
        match entry.split_once('*') {
            Some((value, count_text)) => {
                if let Some(offending) = count_text.chars().find(|c| !c.is_ascii_digit()) {
                    return Err(ParseError::BadNumber {
                        text: format!("*{count_text}"),
                        offending,
                    });
                }
                let count = count_text
                    .parse::<i64>()
                    .ok()
                    .filter(|&n| n > 0 && n < i64::MAX)
                    .ok_or_else(|| ParseError::BadMultiplier {
                        kind,
                        count: count_text.to_string(),
                    })?;
                check(value)?;
                out.extend(std::iter::repeat_n(value, count as usize));
            }
            None => {
                check(entry)?;
                out.push(entry);
            }
        }
    }
    Ok(out.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(arg: &str) -> CpuBind {
        match parse(arg).unwrap() {
            Parsed::Bind(b) => b,
            Parsed::Help => panic!("{arg}: help"),
        }
    }

    #[test]
    fn words_set_the_cpu_bind_bits() {
        assert_eq!(bind("none").flags, NONE);
        assert_eq!(bind("no").flags, NONE);
        assert_eq!(bind("sockets").flags, TO_SOCKETS);
        assert_eq!(bind("Cores").flags, TO_CORES);
        assert_eq!(bind("thread").flags, TO_THREADS);
        assert_eq!(bind("ldoms").flags, TO_LDOMS);
        assert_eq!(bind("rank_ldom").flags, LDRANK);
        assert_eq!(bind("rank").flags, RANK);
        assert_eq!(bind("v,cores").flags, VERBOSE | TO_CORES);
        assert_eq!(bind("verbose,quiet").flags, 0);
        assert_eq!(
            bind("one_thread,threads").flags,
            ONE_THREAD_PER_CORE | TO_THREADS
        );
        // A later unit or mode replaces an earlier one.
        assert_eq!(bind("sockets,cores").flags, TO_CORES);
        assert_eq!(bind("map_cpu:1,none").flags, NONE);
        assert_eq!(bind("map_cpu:1,none").list, "");
    }

    #[test]
    fn lists_keep_their_commas_and_expand_repetitions() {
        // Slurm 22.05.8 src/common/slurm_resource_info.c `slurm_verify_cpu_bind`: a comma followed by a number continues a list.
        let b = bind("map_cpu:0,1,cores");
        assert_eq!((b.flags, b.list.as_str()), (MAP | TO_CORES, "0,1"));
        let b = bind("verbose,mask_cpu:0x3,0x300");
        assert_eq!((b.flags, b.list.as_str()), (VERBOSE | MASK, "3,300"));
        let b = bind("mask_cpu:f0,ff,v");
        assert_eq!((b.flags, b.list.as_str()), (MASK | VERBOSE, "f0,ff"));
        assert_eq!(bind("map_cpu:0*4").list, "0,0,0,0");
        assert_eq!(bind("mapcpu=1*2,3").list, "1,1,3");
        assert_eq!(bind("mask_cpu:0x3*2,c").list, "3,3,c");
        assert_eq!(bind("map_ldom:0,1").flags, LDMAP);
        assert_eq!(bind("mask_ldom:0x1,0x2").list, "1,2");
    }

    #[test]
    fn bad_words_and_lists_are_refused_with_srun_messages() {
        // python test_116_50: map_cpu:NaN and map_cpu:0x0 are rejected.
        let err = parse("map_cpu:NaN").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Failed to validate number: NaN, the offending character is N"
        );
        let err = parse("map_cpu:0x0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Failed to validate number: 0x0, the offending character is x"
        );
        assert_eq!(
            parse("mask_cpu:0x3g").unwrap_err().to_string(),
            "Failed to validate number: 3g, the offending character is g"
        );
        assert_eq!(
            parse("map_cpu:1*0").unwrap_err().to_string(),
            "Invalid map_cpu multiplier: 0"
        );
        assert_eq!(
            parse("map_cpu:1*x").unwrap_err().to_string(),
            "Failed to validate number: *x, the offending character is x"
        );
        assert_eq!(
            parse("map_cpu").unwrap_err().to_string(),
            "missing list for \"--cpu-bind=map_cpu:<list>\""
        );
        assert_eq!(
            parse("mask_ldom:").unwrap_err(),
            ParseError::MissingList("mask_ldom")
        );
        assert_eq!(
            parse("cores,bogus").unwrap_err().to_string(),
            "unrecognized --cpu-bind argument \"bogus\""
        );
        assert!(matches!(parse(""), Err(ParseError::Unrecognized(w)) if w.is_empty()));
    }

    #[test]
    fn help_wins() {
        assert_eq!(parse("verbose,help").unwrap(), Parsed::Help);
        assert!(HELP.contains("map_cpu:<list>"));
    }

    #[test]
    fn describe_follows_slurm_order() {
        assert_eq!(describe(0), "(null type)");
        assert_eq!(
            describe(VERBOSE | MASK | TO_CORES),
            "verbose,cores,mask_cpu"
        );
        assert_eq!(
            describe(LDRANK | ONE_THREAD_PER_CORE),
            "rank_ldom,one_thread"
        );
        assert_eq!(describe(AUTO_BIND_TO_CORES), "autobind=cores");
    }
}
