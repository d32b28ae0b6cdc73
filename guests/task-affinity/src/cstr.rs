//! The C library's lenient number parsing, which decides what Slurm makes
//! of hand-written CPU lists: a number is read from the start of the text
//! and whatever follows is ignored; text that does not start with a number
//! reads as 0.

/// `atoi`: optional leading blanks and sign, then decimal digits. Values
/// beyond `i32` saturate (C leaves them undefined).
pub fn atoi(text: &str) -> i64 {
    let (negative, digits) = sign_and_rest(text);
    let value = leading_digits(digits, 10).min(i64::from(i32::MAX) as u64 + 1) as i64;
    if negative {
        -value
    } else {
        value.min(i64::from(i32::MAX))
    }
}

/// `strtoul(text, NULL, radix)` for radix 10 or 16 (where a `0x` prefix is
/// allowed), truncated to `unsigned int` as Slurm stores it. A minus sign
/// negates modulo 2^32, as C does; overflow saturates to `u32::MAX`.
pub fn strtoul(text: &str, radix: u32) -> u32 {
    let (negative, mut digits) = sign_and_rest(text);
    if radix == 16 {
        if let Some(rest) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_hexdigit()))
        {
            digits = rest;
        }
    }
    let value = leading_digits(digits, radix);
    let value = u32::try_from(value).unwrap_or(u32::MAX);
    if negative {
        value.wrapping_neg()
    } else {
        value
    }
}

fn sign_and_rest(text: &str) -> (bool, &str) {
    let text = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// The value of the leading digits of `text` in `radix`, saturating.
fn leading_digits(text: &str, radix: u32) -> u64 {
    text.chars()
        .map_while(|c| c.to_digit(radix))
        .fold(0u64, |acc, d| {
            acc.saturating_mul(u64::from(radix))
                .saturating_add(u64::from(d))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_a_leading_decimal() {
        assert_eq!(atoi("12"), 12);
        assert_eq!(atoi(" 7x"), 7);
        assert_eq!(atoi("0x3"), 0);
        assert_eq!(atoi("NaN"), 0);
        assert_eq!(atoi("-4"), -4);
        assert_eq!(atoi("99999999999"), i64::from(i32::MAX));
    }

    #[test]
    fn strtoul_reads_decimal_or_hex() {
        assert_eq!(strtoul("15", 10), 15);
        assert_eq!(strtoul("f", 16), 15);
        assert_eq!(strtoul("0x1F", 16), 31);
        assert_eq!(strtoul("3,4", 10), 3);
        assert_eq!(strtoul("abc", 10), 0);
        assert_eq!(strtoul("-1", 10), u32::MAX);
    }
}
