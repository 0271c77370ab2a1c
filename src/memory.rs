//! The machine's memory, for estimates made before something large is built: a structure
//! whose estimated size passes it is refused with the estimate, not left to exhaust the
//! memory.

/// The machine's physical memory in bytes (`MemTotal` of `/proc/meminfo`), where the system
/// says; `None` elsewhere. The total, not what is free at the moment, so that the same input
/// is refused or accepted the same way on one machine whatever else runs.
pub fn physical() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `bytes` as a size people read (`3.2 GiB`).
pub fn show(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{v:.0} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(show(100.0), "100 bytes");
        assert_eq!(show(3.5 * 1024.0 * 1024.0 * 1024.0), "3.5 GiB");
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(physical().is_some_and(|m| m > 1 << 20));
        }
    }
}
