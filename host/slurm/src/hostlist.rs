//! Slurm hostlist expressions: `n[001-128]`, `gpu[1-3,7]`, `r[1-2]n[1-4]`.
//!
//! A hostlist is a comma-separated list of *patterns*. A pattern is literal
//! text with any number of bracket groups; each group holds a comma-separated
//! list of numbers and inclusive ranges (`1-3,7`). A pattern expands to the
//! cartesian product of its groups, the leftmost group varying slowest:
//! `a[1-2]b[3-4]` is `a1b3 a1b4 a2b3 a2b4`. Patterns expand in the order
//! written and duplicates are kept, so a caller that needs unique names
//! checks for itself.
//!
//! A range whose lower bound is written with a leading zero keeps that width:
//! `n[08-10]` is `n08 n09 n10`, while `n[8-10]` is `n8 n9 n10`.
//!
//! # Bounds
//!
//! A few bytes of hostlist can name more hosts than any machine can hold
//! (`n[0-99999999999]`, `a[0-9999]b[0-9999]`, a 4 KB literal times a
//! million). The size of an expansion — how many names, how many bytes of
//! text, and its longest name — is computed from the ranges before anything
//! is allocated ([`measure`]), and an expression is refused when it would
//! exceed [`MAX_NAMES`] names, [`MAX_BYTES`] bytes of names or a name longer
//! than [`MAX_NAME_LEN`] bytes. A reader that expands many expressions from
//! one input (every `NodeName=` line of a `slurm.conf`) also bounds their
//! sum with a shared [`Budget`], so the input as a whole is bounded and not
//! only each expression.
//!
//! Slurm's own `hostlist.c` has fixed limits of its own (on the ranges of a
//! bracket group, and a buffer for a host name); the limits here are chosen
//! from what a cluster can be instead: a million nodes is beyond the largest
//! Slurm cluster, and a name is at most a path (`gres.conf`'s
//! `File=/dev/nvidia[0-7]` is a hostlist).
//!
//! Written here rather than taken from `crates.io`: the published parser for
//! this syntax (`hostlist-parser` 0.1) accepts reversed ranges, silently drops
//! duplicate names (which `slurm.conf` must report), and has no bound on the
//! size of an expansion.

use std::fmt::Write as _;

use thiserror::Error;

/// The most names one expression may expand to: 1,048,576 (2^20), a
/// cluster of a million nodes.
pub const MAX_NAMES: usize = 1 << 20;

/// The most bytes of names one expression may expand to (64 MiB), counting
/// each name's text without separators.
pub const MAX_BYTES: usize = 64 << 20;

/// The longest name an expression may produce: 4096 bytes (Linux's
/// `PATH_MAX`; a host name is at most 255). This also bounds the zero-padded
/// width of a range (`n[0000...01-2]`).
pub const MAX_NAME_LEN: usize = 4096;

/// Why a hostlist expression was refused. Columns count characters from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostlistError {
    /// The expression is empty or only whitespace.
    #[error("empty hostlist")]
    Empty,
    /// Two commas in a row, or a comma at either end.
    #[error("empty host name at column {column}")]
    EmptyName {
        /// Where the empty name starts.
        column: usize,
    },
    /// A `[` that is never closed.
    #[error("`[` at column {column} is never closed")]
    UnclosedBracket {
        /// Column of the `[`.
        column: usize,
    },
    /// A `]` with no `[` before it.
    #[error("`]` at column {column} has no matching `[`")]
    UnopenedBracket {
        /// Column of the `]`.
        column: usize,
    },
    /// A `[` inside a bracket group.
    #[error("nested `[` at column {column}")]
    NestedBracket {
        /// Column of the inner `[`.
        column: usize,
    },
    /// Whitespace or a control character.
    #[error("unexpected character {found:?} at column {column}")]
    BadCharacter {
        /// The character.
        found: char,
        /// Its column.
        column: usize,
    },
    /// A bracket item that is not `N` or `N-M` with decimal numbers.
    #[error("bad range `{item}` in `[{group}]`: expected a number or lo-hi")]
    BadRange {
        /// The offending item.
        item: String,
        /// The whole bracket group, without brackets.
        group: String,
    },
    /// A range whose upper bound is below its lower bound.
    #[error("range `{lo}-{hi}` is reversed")]
    ReversedRange {
        /// The lower bound as written.
        lo: String,
        /// The upper bound as written.
        hi: String,
    },
    /// The expansion would exceed [`MAX_NAMES`] (or a [`Budget`]'s own
    /// per-expression count).
    #[error("expands to more than {limit} names")]
    TooMany {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The expansion would exceed [`MAX_BYTES`] bytes of names.
    #[error("expands to more than {limit} bytes of names")]
    TooLarge {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// A name would be longer than [`MAX_NAME_LEN`] bytes.
    #[error("a name would be {length} bytes long; at most {limit} are allowed")]
    NameTooLong {
        /// The longest name's length.
        length: u128,
        /// The limit.
        limit: usize,
    },
    /// The expression fits on its own, but not in what is left of the
    /// [`Budget`] the expressions before it used.
    #[error(
        "together with the hostlists before it, expands to more than {names} names \
         or {bytes} bytes of names in all"
    )]
    BudgetSpent {
        /// The budget's total names.
        names: usize,
        /// The budget's total bytes.
        bytes: usize,
    },
}

/// The size of an expansion, computed without expanding ([`measure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// How many names.
    pub names: usize,
    /// Their text, in bytes.
    pub bytes: usize,
    /// The longest name, in bytes.
    pub longest: usize,
}

/// What a run of expansions from one input may still produce, in names and
/// bytes of names; each expression is also held to [`MAX_NAMES`],
/// [`MAX_BYTES`] and [`MAX_NAME_LEN`].
///
/// A reader makes one per input ([`Budget::new`]) and expands every hostlist
/// of that input through it ([`Budget::expand`]), so that many expressions
/// within the per-expression limits cannot together exhaust memory or time.
#[derive(Debug, Clone)]
pub struct Budget {
    total: (usize, usize),
    left: (usize, usize),
}

impl Budget {
    /// A budget of `names` names and `bytes` bytes of names in all.
    pub fn new(names: usize, bytes: usize) -> Budget {
        Budget {
            total: (names, bytes),
            left: (names, bytes),
        }
    }

    /// Expands `expr` (as [`expand`]) and takes its size from the budget.
    ///
    /// # Errors
    ///
    /// As [`expand`], and [`HostlistError::BudgetSpent`] when the
    /// expansion is larger than what is left; nothing is taken then.
    pub fn expand(&mut self, expr: &str) -> Result<Vec<String>, HostlistError> {
        let patterns = parse(expr)?;
        let size = size_of_patterns(&patterns)?;
        self.charge(size.names, size.bytes)?;
        Ok(expand_patterns(&patterns, size))
    }

    /// Takes `names` names and `bytes` bytes from the budget without
    /// expanding anything (a reader's `Nodes=ALL` names every node).
    ///
    /// # Errors
    ///
    /// [`HostlistError::BudgetSpent`] when less is left; nothing is taken
    /// then.
    pub fn charge(&mut self, names: usize, bytes: usize) -> Result<(), HostlistError> {
        match (
            self.left.0.checked_sub(names),
            self.left.1.checked_sub(bytes),
        ) {
            (Some(n), Some(b)) => {
                self.left = (n, b);
                Ok(())
            }
            _ => Err(HostlistError::BudgetSpent {
                names: self.total.0,
                bytes: self.total.1,
            }),
        }
    }
}

/// One inclusive numeric range of a bracket group.
#[derive(Debug, Clone, Copy)]
struct Range {
    lo: u64,
    hi: u64,
    /// Zero-padded width, 0 for no padding.
    width: usize,
}

impl Range {
    /// Number of values, `None` for the one range too long for a `u64`.
    fn len(&self) -> Option<u64> {
        (self.hi - self.lo).checked_add(1)
    }

    /// Bytes of the longest value as written.
    fn longest(&self) -> u128 {
        self.width.max(digits(self.hi)) as u128
    }

    /// Bytes of all values as written together, counted a decade at a
    /// time (`[8-10]` is 1 + 1 + 2).
    fn text_len(&self) -> u128 {
        let mut total = 0u128;
        let mut start = u128::from(self.lo);
        let hi = u128::from(self.hi);
        while start <= hi {
            let d = digits(start as u64);
            let decade_end = 10u128.pow(d as u32) - 1;
            let end = decade_end.min(hi);
            total += (end - start + 1) * self.width.max(d) as u128;
            start = end + 1;
        }
        total
    }
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A piece of a pattern.
#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Group(Vec<Range>),
}

/// Expands a hostlist expression into host names, in order.
///
/// # Errors
///
/// A [`HostlistError`] for an empty expression or name, unbalanced or nested
/// brackets, whitespace or control characters, a malformed or reversed range,
/// or an expansion larger than [`MAX_NAMES`], [`MAX_BYTES`] or with a name
/// longer than [`MAX_NAME_LEN`]; nothing is allocated for the names then.
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    Budget::new(MAX_NAMES, MAX_BYTES).expand(expr)
}

/// The size `expr` expands to, computed from its ranges without expanding
/// it, so that a caller with a smaller limit (`gres.conf`'s 1024 files of
/// a line) can refuse it first.
///
/// # Errors
///
/// As [`expand`].
pub fn measure(expr: &str) -> Result<Size, HostlistError> {
    size_of_patterns(&parse(expr)?)
}

/// The size of the expansion, or the limit it exceeds.
fn size_of_patterns(patterns: &[Vec<Part>]) -> Result<Size, HostlistError> {
    let too_many = HostlistError::TooMany { limit: MAX_NAMES };
    let mut names = 0u128;
    let mut bytes = 0u128;
    let mut longest = 0u128;
    for parts in patterns {
        // Names of the pattern, and per group its value count and text.
        let mut count = 1u128;
        let mut literal = 0u128;
        let mut widest = 0u128;
        let mut groups: Vec<(u128, u128)> = Vec::new();
        for part in parts {
            match part {
                Part::Literal(text) => {
                    literal += text.len() as u128;
                    widest += text.len() as u128;
                }
                Part::Group(ranges) => {
                    let n = ranges
                        .iter()
                        .try_fold(0u128, |sum, r| Some(sum + u128::from(r.len()?)))
                        .ok_or(too_many.clone())?;
                    count = count.saturating_mul(n);
                    if count > MAX_NAMES as u128 {
                        return Err(too_many);
                    }
                    widest += ranges.iter().map(Range::longest).max().unwrap_or(0);
                    groups.push((n, ranges.iter().map(Range::text_len).sum()));
                }
            }
        }
        names += count;
        if names > MAX_NAMES as u128 {
            return Err(too_many);
        }
        if widest > MAX_NAME_LEN as u128 {
            return Err(HostlistError::NameTooLong {
                length: widest,
                limit: MAX_NAME_LEN,
            });
        }
        longest = longest.max(widest);
        // Each group's values appear count / n times each.
        bytes += count * literal
            + groups
                .iter()
                .map(|&(n, text)| count / n * text)
                .sum::<u128>();
        if bytes > MAX_BYTES as u128 {
            return Err(HostlistError::TooLarge { limit: MAX_BYTES });
        }
    }
    // All three are within usize limits, checked above.
    Ok(Size {
        names: names as usize,
        bytes: bytes as usize,
        longest: longest as usize,
    })
}

/// The names of `patterns`, whose `size` has been checked: each name is
/// written once into a buffer and copied out at its exact length.
fn expand_patterns(patterns: &[Vec<Part>], size: Size) -> Vec<String> {
    let mut names = Vec::with_capacity(size.names);
    let mut buffer = String::with_capacity(size.longest);
    for parts in patterns {
        // One position per group: (range, value); the last group varies
        // fastest.
        let groups: Vec<&[Range]> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Group(ranges) => Some(ranges.as_slice()),
                Part::Literal(_) => None,
            })
            .collect();
        let mut at: Vec<(usize, u64)> = groups.iter().map(|g| (0, g[0].lo)).collect();
        loop {
            buffer.clear();
            let mut group = 0;
            for part in parts {
                match part {
                    Part::Literal(text) => buffer.push_str(text),
                    Part::Group(ranges) => {
                        let (range, value) = at[group];
                        let width = ranges[range].width;
                        write!(buffer, "{value:0width$}").expect("writing to a String");
                        group += 1;
                    }
                }
            }
            names.push(buffer.clone());
            if !advance(&groups, &mut at) {
                break;
            }
        }
    }
    names
}

/// Steps the odometer `at` over `groups`; false once every position has
/// been visited.
fn advance(groups: &[&[Range]], at: &mut [(usize, u64)]) -> bool {
    for (ranges, (range, value)) in groups.iter().zip(at.iter_mut()).rev() {
        if *value < ranges[*range].hi {
            *value += 1;
            return true;
        }
        if *range + 1 < ranges.len() {
            *range += 1;
            *value = ranges[*range].lo;
            return true;
        }
        *range = 0;
        *value = ranges[0].lo;
    }
    false
}
fn parse(expr: &str) -> Result<Vec<Vec<Part>>, HostlistError> {
    if expr.trim().is_empty() {
        return Err(HostlistError::Empty);
    }
    let mut patterns = Vec::new();
    let mut parts: Vec<Part> = Vec::new();
    let mut literal = String::new();
    let mut pattern_start = 1;
    let mut chars = expr.chars().enumerate().map(|(i, c)| (i + 1, c));
    while let Some((column, c)) = chars.next() {
        match c {
            ',' => {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                if parts.is_empty() {
                    return Err(HostlistError::EmptyName {
                        column: pattern_start,
                    });
                }
                patterns.push(std::mem::take(&mut parts));
                pattern_start = column + 1;
            }
            '[' => {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                let mut group = String::new();
                loop {
                    match chars.next() {
                        None => return Err(HostlistError::UnclosedBracket { column }),
                        Some((_, ']')) => break,
                        Some((inner, '[')) => {
                            return Err(HostlistError::NestedBracket { column: inner })
                        }
                        Some((inner, ch)) if ch.is_whitespace() || ch.is_control() => {
                            return Err(HostlistError::BadCharacter {
                                found: ch,
                                column: inner,
                            })
                        }
                        Some((_, ch)) => group.push(ch),
                    }
                }
                parts.push(Part::Group(parse_group(&group)?));
            }
            ']' => return Err(HostlistError::UnopenedBracket { column }),
            c if c.is_whitespace() || c.is_control() => {
                return Err(HostlistError::BadCharacter { found: c, column })
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    if parts.is_empty() {
        return Err(HostlistError::EmptyName {
            column: pattern_start,
        });
    }
    patterns.push(parts);
    Ok(patterns)
}

fn parse_group(group: &str) -> Result<Vec<Range>, HostlistError> {
    group
        .split(',')
        .map(|item| {
            let bad = || HostlistError::BadRange {
                item: item.to_owned(),
                group: group.to_owned(),
            };
            let (lo_text, hi_text) = item.split_once('-').unwrap_or((item, item));
            let lo = parse_number(lo_text).ok_or_else(bad)?;
            let hi = parse_number(hi_text).ok_or_else(bad)?;
            if hi < lo {
                return Err(HostlistError::ReversedRange {
                    lo: lo_text.to_owned(),
                    hi: hi_text.to_owned(),
                });
            }
            let width = if lo_text.len() > 1 && lo_text.starts_with('0') {
                lo_text.len()
            } else {
                0
            };
            Ok(Range { lo, hi, width })
        })
        .collect()
}

fn parse_number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Host names as slurmctld prints a set of nodes (`NodeList=`, sinfo's
/// lists): `bitmap2node_name` (common/node_conf.c) sorts the names with
/// `hostlist_sort` and prints `hostlist_ranged_string` (common/hostlist.c).
/// Names are ordered by the text before their numeric suffix, names without
/// one after those with one, then by the suffix's width and value;
/// consecutive numbers of one prefix and width form a range (`n[1-3,7]`,
/// `gpu[01-02]`), and a group of one name stays as it is (`login`, `n5`).
/// A suffix written with a leading zero has its digits as its width; one
/// without has none (`n9` and `n10` make `n[9-10]`), unless a zero-padded
/// name of the same prefix has as many digits (`n08`, `n09`, `n10` make
/// `n[08-10]`), as `hostrange_width_combine` joins them. Duplicates appear
/// once. The inverse of [`expand`] for such lists.
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    // (prefix, digits of the suffix, zero-padded) of each name
    fn split(name: &str) -> (&str, &str, bool) {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let suffix = &name[name.len() - digits..];
        (
            &name[..name.len() - digits],
            suffix,
            digits > 1 && suffix.starts_with('0'),
        )
    }
    let padded: std::collections::HashSet<(&str, usize)> = names
        .iter()
        .map(|n| split(n.as_ref()))
        .filter(|&(_, _, pad)| pad)
        .map(|(prefix, suffix, _)| (prefix, suffix.len()))
        .collect();
    // (prefix, no numeric suffix, width, number)
    let mut keyed: Vec<(&str, bool, usize, u64)> = names
        .iter()
        .map(|name| {
            let name = name.as_ref();
            let (prefix, suffix, pad) = split(name);
            match suffix.parse::<u64>() {
                Ok(n) if pad || padded.contains(&(prefix, suffix.len())) => {
                    (prefix, false, suffix.len(), n)
                }
                Ok(n) => (prefix, false, 0, n),
                Err(_) => (name, true, 0, 0),
            }
        })
        .collect();
    keyed.sort_unstable();
    keyed.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < keyed.len() {
        let (prefix, plain, width, _) = keyed[i];
        if plain {
            out.push(prefix.to_owned());
            i += 1;
            continue;
        }
        let group: Vec<u64> = keyed[i..]
            .iter()
            .take_while(|k| (k.0, k.1, k.2) == (prefix, false, width))
            .map(|k| k.3)
            .collect();
        i += group.len();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for n in &group {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == *n => run.1 = *n,
                _ => runs.push((*n, *n)),
            }
        }
        let text: Vec<String> = runs
            .iter()
            .map(|&(lo, hi)| {
                if lo == hi {
                    format!("{lo:0width$}")
                } else {
                    format!("{lo:0width$}-{hi:0width$}")
                }
            })
            .collect();
        if group.len() == 1 {
            out.push(format!("{prefix}{}", text[0]));
        } else {
            out.push(format!("{prefix}[{}]", text.join(",")));
        }
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(expr: &str) -> Vec<String> {
        expand(expr).unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn plain_names_and_top_level_lists() {
        assert_eq!(names("n1"), ["n1"]);
        assert_eq!(names("n1,n[3-4]"), ["n1", "n3", "n4"]);
        assert_eq!(names("login,n2"), ["login", "n2"]);
    }

    #[test]
    fn ranges_and_lists_inside_brackets() {
        assert_eq!(names("n[1-3,7]"), ["n1", "n2", "n3", "n7"]);
        assert_eq!(names("n[5]"), ["n5"]);
        assert_eq!(names("[1-2]"), ["1", "2"]);
        assert_eq!(names("n[3,1]"), ["n3", "n1"], "order is kept as written");
    }

    #[test]
    fn zero_padding_follows_the_lower_bound() {
        let expanded = names("n[001-128]");
        assert_eq!(expanded.len(), 128);
        assert_eq!(expanded[0], "n001");
        assert_eq!(expanded[9], "n010");
        assert_eq!(expanded[127], "n128");
        assert_eq!(names("n[08-10]"), ["n08", "n09", "n10"]);
        assert_eq!(names("n[8-10]"), ["n8", "n9", "n10"]);
        assert_eq!(names("n[0-1]"), ["n0", "n1"]);
    }

    #[test]
    fn several_groups_form_a_cartesian_product_left_to_right() {
        assert_eq!(names("a[1-2]b[3-4]"), ["a1b3", "a1b4", "a2b3", "a2b4"]);
        assert_eq!(
            names("r[1-2]n[1-2]-ib,x"),
            ["r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib", "x"]
        );
    }

    #[test]
    fn duplicates_are_kept() {
        assert_eq!(names("n1,n[1-2]"), ["n1", "n1", "n2"]);
    }

    #[test]
    fn malformed_expressions_are_refused() {
        assert_eq!(expand(""), Err(HostlistError::Empty));
        assert_eq!(expand("  "), Err(HostlistError::Empty));
        assert_eq!(
            expand("n[1-3"),
            Err(HostlistError::UnclosedBracket { column: 2 })
        );
        assert_eq!(
            expand("n1-3]"),
            Err(HostlistError::UnopenedBracket { column: 5 })
        );
        assert_eq!(
            expand("n[[1]]"),
            Err(HostlistError::NestedBracket { column: 3 })
        );
        assert_eq!(
            expand("n[5-3]"),
            Err(HostlistError::ReversedRange {
                lo: "5".into(),
                hi: "3".into()
            })
        );
        assert_eq!(
            expand("n1,,n2"),
            Err(HostlistError::EmptyName { column: 4 })
        );
        assert_eq!(expand(",n1"), Err(HostlistError::EmptyName { column: 1 }));
        assert_eq!(expand("n1,"), Err(HostlistError::EmptyName { column: 4 }));
        assert_eq!(
            expand("n1 n2"),
            Err(HostlistError::BadCharacter {
                found: ' ',
                column: 3
            })
        );
        for bad in [
            "n[]", "n[1-]", "n[-3]", "n[1,,2]", "n[a-b]", "n[1-2-3]", "n[+1]",
        ] {
            assert!(
                matches!(expand(bad), Err(HostlistError::BadRange { .. })),
                "{bad} should be a bad range, got {:?}",
                expand(bad)
            );
        }
    }

    #[test]
    fn huge_expansions_are_refused_before_allocating() {
        let too_many = Err(HostlistError::TooMany { limit: MAX_NAMES });
        assert_eq!(expand("n[1-1048577]"), too_many);
        assert_eq!(expand("n[1-1024][1-1025]"), too_many);
        assert_eq!(expand("n[0-18446744073709551615]"), too_many);
        assert_eq!(
            expand("a[0-4294967296]b[0-4294967296]c[0-4294967296]"),
            too_many
        );
        assert_eq!(expand("n[1-600000],m[1-448577]"), too_many);
        assert_eq!(expand("n[1-1048576]").map(|v| v.len()), Ok(MAX_NAMES));
    }

    // Issue 26, class 6: the count was bounded but not the bytes, so a
    // 4 KB literal times a million names (4 GB) was expanded. Before the
    // change this test allocated gigabytes; now it is refused from the
    // ranges alone.
    #[test]
    fn expansions_are_bounded_by_bytes_as_well_as_names() {
        let long = "x".repeat(4000);
        assert_eq!(
            expand(&format!("{long}[1-1000000]")),
            Err(HostlistError::TooLarge { limit: MAX_BYTES })
        );
        // 16,756 names of 4005 bytes fit in 64 MiB; 16,757 do not.
        let fits = measure(&format!("{long}[10000-26755]")).unwrap();
        assert_eq!((fits.names, fits.bytes), (16_756, 16_756 * 4005));
        assert_eq!(
            measure(&format!("{long}[10000-26756]")),
            Err(HostlistError::TooLarge { limit: MAX_BYTES })
        );
        // A name longer than a path is refused on its own.
        assert_eq!(
            expand(&"y".repeat(MAX_NAME_LEN + 1)),
            Err(HostlistError::NameTooLong {
                length: MAX_NAME_LEN as u128 + 1,
                limit: MAX_NAME_LEN
            })
        );
        assert_eq!(
            expand(&"y".repeat(MAX_NAME_LEN)).unwrap()[0].len(),
            MAX_NAME_LEN
        );
    }

    // Issue 26, class 7: a zero-padded bound of 70,001 digits made the
    // formatting width overflow and panicked; it is now a name too long.
    #[test]
    fn a_padded_bound_wider_than_a_name_is_refused_not_a_panic() {
        let bound = format!("{}1", "0".repeat(70_000));
        assert_eq!(
            expand(&format!("n[{bound}-2]")),
            Err(HostlistError::NameTooLong {
                length: 70_002,
                limit: MAX_NAME_LEN
            })
        );
        // Without the leading zeros the number is beyond a u64.
        assert!(matches!(
            expand(&format!("n[{}]", "9".repeat(70_001))),
            Err(HostlistError::BadRange { .. })
        ));
    }

    #[test]
    fn measure_counts_names_and_bytes_without_expanding() {
        let size = |expr: &str| measure(expr).map(|s| (s.names, s.bytes, s.longest));
        assert_eq!(size("n[8-10]"), Ok((3, 7, 3)));
        assert_eq!(size("n[08-10]"), Ok((3, 9, 3)));
        assert_eq!(size("a[1-2]b[9-10],login"), Ok((5, 23, 5)));
        assert_eq!(
            size("n[0-99999999999]"),
            Err(HostlistError::TooMany { limit: MAX_NAMES })
        );
        for expr in [
            "n[8-10]",
            "n[08-10]",
            "a[1-2]b[9-10],login",
            "r[1-3,7]n[001-012]-ib",
        ] {
            let names = expand(expr).unwrap();
            let bytes: usize = names.iter().map(String::len).sum();
            let longest = names.iter().map(String::len).max().unwrap();
            assert_eq!(size(expr), Ok((names.len(), bytes, longest)), "{expr}");
        }
    }

    #[test]
    fn a_budget_bounds_many_expressions_together() {
        let mut budget = Budget::new(10, 100);
        assert_eq!(budget.expand("n[1-6]").map(|v| v.len()), Ok(6));
        assert_eq!(
            budget.expand("m[1-5]"),
            Err(HostlistError::BudgetSpent {
                names: 10,
                bytes: 100
            })
        );
        // A refused expression takes nothing.
        assert_eq!(budget.expand("m[1-4]").map(|v| v.len()), Ok(4));
        assert!(budget.charge(1, 0).is_err());
        let mut bytes = Budget::new(100, 10);
        assert!(bytes.expand("abcdef,ghijk").is_err());
        assert_eq!(
            expand("n1 ").unwrap_err().to_string(),
            "unexpected character ' ' at column 3"
        );
        assert_eq!(
            Budget::new(1, 1).expand("n[1-2]").unwrap_err().to_string(),
            "together with the hostlists before it, expands to more than 1 names or 1 bytes of names in all"
        );
    }

    /// Adversarial shapes of up to about 1 MB (issue 26, classes 6 and 7):
    /// each is answered from the ranges, with an error or a bounded result.
    #[test]
    fn adversarial_expressions_stay_bounded() {
        let mib = 1 << 20;
        let cases = [
            "n[0-99999999999]".to_owned(),
            format!("n[{}]", "1".repeat(mib)),
            format!("n[0-{}]", "9".repeat(mib)),
            "[0-9]".repeat(mib / 5),
            "a[0-9999]b[0-9999]".to_owned(),
            "n[1-1000],".repeat(mib / 10) + "n1",
            format!("{}[1-1000000]", "x".repeat(64)),
            "[1-2,".repeat(mib / 5) + "3]",
        ];
        for expr in &cases {
            if let Ok(size) = measure(expr) {
                assert!(size.names <= MAX_NAMES && size.bytes <= MAX_BYTES);
            }
        }
        // A megabyte of short names is a bounded result.
        let many = "n1,".repeat(mib / 3) + "n1";
        let size = measure(&many).unwrap();
        assert_eq!((size.names, size.bytes), (mib / 3 + 1, 2 * (mib / 3 + 1)));
    }
    #[test]
    fn error_messages_name_the_problem() {
        assert_eq!(
            expand("n[5-3]").unwrap_err().to_string(),
            "range `5-3` is reversed"
        );
        assert_eq!(
            expand("n[1-3").unwrap_err().to_string(),
            "`[` at column 2 is never closed"
        );
        assert_eq!(
            expand("n[x]").unwrap_err().to_string(),
            "bad range `x` in `[x]`: expected a number or lo-hi"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(expr in "[a-c0-9\\[\\]\\-, ]{0,24}") {
            let _ = expand(&expr);
        }

        #[test]
        fn single_ranges_expand_to_their_length(lo in 0u64..5000, len in 1u64..50, width in 0usize..6) {
            let hi = lo + len - 1;
            let expr = format!("x[{lo:0width$}-{hi}]");
            let expanded = expand(&expr).unwrap();
            proptest::prop_assert_eq!(expanded.len() as u64, len);
            proptest::prop_assert!(expanded.iter().all(|n| n.starts_with('x')));
        }

        /// Issue 26, class 6: any expression of up to 4 KB is refused or
        /// measured within the bounds, and where it is small enough to
        /// expand here its expansion is exactly what was measured.
        #[test]
        fn expansions_stay_within_their_measure(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z]{1,8}",
                    "\\[[0-9]{1,3}-[0-9]{1,12}\\]",
                    "\\[0{0,40}[0-9]{1,4}(-[0-9]{1,5})?(,[0-9]{1,3})*\\]",
                    proptest::strategy::Just(",".to_owned()),
                    "[0-9\\[\\]\\-,]{1,8}",
                ],
                0..256,
            ),
        ) {
            let expr: String = pieces.concat();
            match measure(&expr) {
                Ok(size) => {
                    proptest::prop_assert!(size.names <= MAX_NAMES);
                    proptest::prop_assert!(size.bytes <= MAX_BYTES);
                    proptest::prop_assert!(size.longest <= MAX_NAME_LEN);
                    if size.names <= 20_000 {
                        let names = expand(&expr).unwrap();
                        proptest::prop_assert_eq!(names.len(), size.names);
                        proptest::prop_assert_eq!(names.iter().map(String::len).sum::<usize>(), size.bytes);
                    }
                }
                Err(e) => proptest::prop_assert_eq!(expand(&expr).unwrap_err(), e),
            }
        }
    }

    #[test]
    fn compresses_as_slurmctld_prints_node_sets() {
        // As scontrol printed them on the anchor cluster
        // (tests/fixtures/anchor/select/*/stream.txt): n[1-4], n[1,4], n1.
        assert_eq!(compress(&["n1", "n2", "n3", "n4"]), "n[1-4]");
        assert_eq!(compress(&["n1", "n4"]), "n[1,4]");
        assert_eq!(compress(&["n1"]), "n1");
        // hostlist_sort's order: by prefix, numbers ascending, names
        // without a number after those with one; widths kept apart.
        assert_eq!(compress(&["n3", "n1", "n2", "n7"]), "n[1-3,7]");
        assert_eq!(compress(&["n1", "n2", "h1"]), "h1,n[1-2]");
        assert_eq!(compress(&["login", "gpu02", "gpu01"]), "gpu[01-02],login");
        assert_eq!(compress(&["n9", "n10", "n11"]), "n[9-11]");
        assert_eq!(compress(&["n08", "n09", "n10"]), "n[08-10]");
        assert_eq!(compress(&["n08", "n9"]), "n9,n08");
        assert_eq!(compress(&["n1", "n1"]), "n1");
        assert_eq!(compress::<&str>(&[]), "");
        for list in [
            "n[1-3,7]",
            "gpu[01-02],login",
            "a5",
            "r[1-2]",
            "n[1-1000]",
            "n[008-012]",
        ] {
            assert_eq!(compress(&expand(list).unwrap()), list);
        }
    }
}
