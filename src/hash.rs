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

/// The hash of a scenario: its text's ([`text_hash`]) when it reads no other file, else of its
/// text followed by the digests of the files it read (GOAL schedules, traces, profiles), in
/// the order it read them: equal hashes mean equal inputs.
pub fn scenario_hash(text: &str, files: &[u64]) -> String {
    if files.is_empty() {
        return text_hash(text);
    }
    let mut all = text.to_owned();
    for d in files {
        all.push_str(&format!(
            "\n# and a file whose content's digest is {d:016x}"
        ));
    }
    text_hash(&all)
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
