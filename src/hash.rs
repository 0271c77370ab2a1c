//! A hash whose value is fixed by its definition: scenario texts and run options are hashed
//! into ids that stay comparable across builds, platforms and parsim versions.

/// FNV-1a, 64 bits: a small hash whose value is fixed by its definition (unlike std's
/// `DefaultHasher`), so ids stay comparable across builds and platforms.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The hash of a scenario's text, as 16 hex digits.
pub fn text_hash(text: &str) -> String {
    format!("{:016x}", fnv1a(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_test_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(text_hash("a"), "af63dc4c8601ec8c");
    }
}
