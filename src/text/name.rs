//! Names made from values (a CLI version in a Hive partition directory, versions in a
//! history's diff file names): bounded in length, so a long value never makes a name
//! the file system refuses (255 bytes a component on Linux), and distinct values stay
//! distinct names. The caller restricts the character set first (each name has its own
//! escaping rule); the whole value is kept inside the file the name leads to.

/// Longest value part of a name, in bytes.
pub const MAX_VALUE: usize = 96;

/// `escaped` (already restricted to the name's character set, `%XX` escapes allowed) cut
/// to at most `max` bytes: a longer one keeps its first bytes and ends with `+` and 16
/// hex digits of the XXH3-64 of the whole, so two long values that share their start do
/// not share a name. Never cuts inside a `%XX` escape.
pub fn bounded(escaped: &str, max: usize) -> String {
    if escaped.len() <= max {
        return escaped.to_string();
    }
    const TAIL: usize = 17; // '+' and 16 hex digits
    let mut end = max.saturating_sub(TAIL).min(escaped.len());
    while !escaped.is_char_boundary(end) {
        end -= 1;
    }
    // back off from a cut escape: "%4" or "%" at the end
    if let Some(p) = escaped[..end].rfind('%') {
        if end - p < 3 {
            end = p;
        }
    }
    format!(
        "{}+{:016x}",
        &escaped[..end],
        xxhash_rust::xxh3::xxh3_64(escaped.as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_a_digest_of_the_whole() {
        assert_eq!(bounded("2.1.304", MAX_VALUE), "2.1.304");
        let a = "9".repeat(300);
        let b = format!("{}8", "9".repeat(299));
        let (na, nb) = (bounded(&a, MAX_VALUE), bounded(&b, MAX_VALUE));
        assert_eq!((na.len(), nb.len()), (MAX_VALUE, MAX_VALUE));
        assert_ne!(na, nb);
        assert!(na.starts_with("9999"));
        // never inside an escape
        let e = "%2F".repeat(100);
        let n = bounded(&e, MAX_VALUE);
        assert!(n.len() <= MAX_VALUE);
        let head = n.split('+').next().unwrap();
        assert_eq!(head.len() % 3, 0, "{n}");
    }
}
