//! Number and noun formats shared by every renderer and message: a count with its noun
//! ([`plural`]), thousands separators ([`thousands`]), dollars ([`usd`]), the two kinds of
//! percent ([`pct_of_rate`] for a rate from 0 to 1, [`pct_change`] for a change between
//! two sizes), and mebibytes ([`mib`]). One function per format, so a figure reads the same
//! in the terminal, in Markdown, in HTML and on stderr.

/// The form of a noun for `n` of it: `singular` for exactly one, else `plural` (zero is
/// plural: `0 exchanges`).
pub fn noun_form<'a>(n: u64, singular: &'a str, plural: &'a str) -> &'a str {
    if n == 1 {
        singular
    } else {
        plural
    }
}

/// `n` and a noun, singular for one (`1 exchange`, `2 exchanges`, `0 exchanges`); the
/// plural is the noun with `s`.
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    plural_irregular(n, noun, &format!("{noun}s"))
}

/// [`plural`] for a noun whose plural is not the noun with `s` (`entry`, `entries`).
pub fn plural_irregular(n: impl Into<u64>, singular: &str, plural: &str) -> String {
    let n = n.into();
    format!("{n} {}", noun_form(n, singular, plural))
}

/// `47794` → `47,794`; `-19918` → `-19,918`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Dollars with four decimals, `$1.2345` (a negative zero, an empty float sum, shows as
/// zero).
pub fn usd(v: f64) -> String {
    format!("${:.4}", v + 0.0)
}

/// The text of a cost the analysis may leave unpriced: [`usd`], or `unpriced` for `None`
/// (the model is not in the price table).
pub fn usd_or_unpriced(v: Option<f64>) -> String {
    v.map_or_else(|| "unpriced".to_string(), usd)
}

/// A rate from 0 to 1 in percent with one decimal: `0.123` → `12.3%`.
pub fn pct_of_rate(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The change from `a` to `b` in percent of `a`, signed, one decimal (`+4.0%`); `new`
/// when `a` is 0 and `b` is not; empty when they are equal.
pub fn pct_change(a: u64, b: u64) -> String {
    if a == 0 {
        return if b == 0 { "" } else { "new" }.into();
    }
    if a == b {
        return String::new();
    }
    let delta = i128::from(b) - i128::from(a);
    format!("{:+.1}%", delta as f64 / a as f64 * 100.0)
}

/// Bytes in mebibytes with one decimal: `1572864` → `1.5 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_exchange_is_singular() {
        assert_eq!(plural(1u64, "exchange"), "1 exchange");
        assert_eq!(plural(0u64, "exchange"), "0 exchanges");
        assert_eq!(plural(12u64, "tool"), "12 tools");
        assert_eq!(plural_irregular(1u64, "entry", "entries"), "1 entry");
        assert_eq!(plural_irregular(7u64, "entry", "entries"), "7 entries");
    }

    #[test]
    fn numbers() {
        assert_eq!(thousands(47794), "47,794");
        assert_eq!(thousands(-19918), "-19,918");
        assert_eq!(thousands(999), "999");
        assert_eq!(usd(-0.0), "$0.0000");
        assert_eq!(usd(1.23456), "$1.2346");
        assert_eq!(usd_or_unpriced(None), "unpriced");
        assert_eq!(mib(1_572_864), "1.5 MiB");
    }

    /// The two percents differ in meaning: a rate is a fraction, a change is relative to A.
    #[test]
    fn a_rate_and_a_change_are_two_percents() {
        assert_eq!(pct_of_rate(0.123), "12.3%");
        assert_eq!(pct_change(100, 104), "+4.0%");
        assert_eq!(pct_change(100, 90), "-10.0%");
        assert_eq!(pct_change(0, 5), "new");
        assert_eq!(pct_change(0, 0), "");
        assert_eq!(pct_change(7, 7), "");
    }
}
