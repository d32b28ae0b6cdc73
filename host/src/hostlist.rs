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
//! Written here rather than taken from `crates.io`: the published parser for
//! this syntax (`hostlist-parser` 0.1) accepts reversed ranges, silently drops
//! duplicate names (which `slurm.conf` must report), and has no bound on the
//! size of an expansion.

use thiserror::Error;

/// The most names one expression may expand to.
///
/// The count is computed before anything is allocated, so `n[1-99999999999]`
/// is refused at once instead of exhausting memory.
pub const MAX_NAMES: usize = 1_000_000;

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
    /// The expansion would exceed [`MAX_NAMES`].
    #[error("expands to more than {limit} names")]
    TooMany {
        /// The limit that was exceeded.
        limit: usize,
    },
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
/// or an expansion larger than [`MAX_NAMES`].
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    let patterns = parse(expr)?;
    let total = patterns
        .iter()
        .try_fold(0u64, |acc, p| acc.checked_add(pattern_len(p)?))
        .filter(|&n| n <= MAX_NAMES as u64)
        .ok_or(HostlistError::TooMany { limit: MAX_NAMES })?;
    let mut names = Vec::with_capacity(total as usize);
    for pattern in &patterns {
        expand_pattern(pattern, &mut names);
    }
    Ok(names)
}

/// Number of names a pattern expands to, `None` on overflow.
fn pattern_len(parts: &[Part]) -> Option<u64> {
    parts.iter().try_fold(1u64, |acc, part| match part {
        Part::Literal(_) => Some(acc),
        Part::Group(ranges) => {
            let n = ranges
                .iter()
                .try_fold(0u64, |sum, r| sum.checked_add(r.len()?))?;
            acc.checked_mul(n)
        }
    })
}

fn expand_pattern(parts: &[Part], out: &mut Vec<String>) {
    let mut names = vec![String::new()];
    for part in parts {
        match part {
            Part::Literal(text) => names.iter_mut().for_each(|n| n.push_str(text)),
            Part::Group(ranges) => {
                let mut next = Vec::new();
                for prefix in &names {
                    for r in ranges {
                        for i in r.lo..=r.hi {
                            next.push(format!("{prefix}{i:0width$}", width = r.width));
                        }
                    }
                }
                names = next;
            }
        }
    }
    out.append(&mut names);
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
        assert_eq!(expand("n[1-1000001]"), too_many);
        assert_eq!(expand("n[1-1000][1-1001]"), too_many);
        assert_eq!(expand("n[0-18446744073709551615]"), too_many);
        assert_eq!(
            expand("a[0-4294967296]b[0-4294967296]c[0-4294967296]"),
            too_many
        );
        assert_eq!(expand("n[1-600000],m[1-400001]"), too_many);
        assert_eq!(expand("n[1-1000000]").map(|v| v.len()), Ok(MAX_NAMES));
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
    }
}
