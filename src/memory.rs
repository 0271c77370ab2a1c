//! The machine's memory, for estimates made before something large is built: a structure
//! whose estimated size passes it is refused with the estimate, not left to exhaust the
//! memory.

/// The most memory this process may take, in bytes: the machine's physical memory
/// (`MemTotal` of `/proc/meminfo`), or less where the process's limit on its address space
/// (`ulimit -v`, in `/proc/self/limits`) or its control group's (`memory.max`, as a batch
/// system's job has) says so; `None` where the system says nothing. Limits, not what is free
/// at the moment, so that the same input is refused or accepted the same way in the same
/// setting whatever else runs.
pub fn limit() -> Option<u64> {
    [total(), address_space(), control_group()]
        .into_iter()
        .flatten()
        .min()
}

/// `MemTotal` of `/proc/meminfo`.
fn total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft limit on the address space of `/proc/self/limits` ("unlimited": `None`).
fn address_space() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The memory limit of the process's control group (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), where one is set.
fn control_group() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
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
            assert!(limit().is_some_and(|m| m > 1 << 20));
            assert!(limit() <= total());
        }
    }
}
