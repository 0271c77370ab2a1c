//! The machine's memory, for estimates made before something large is built: a structure
//! whose estimated size passes it is refused with the estimate, not left to exhaust the
//! memory.

/// The most memory this process may take, in bytes: the machine's physical memory
/// (`MemTotal` of `/proc/meminfo`), or less where the process's limit on its address space
/// (`ulimit -v`, in `/proc/self/limits`) or its control group's (`memory.max` of its group or
/// a group above it, as a batch system's job has) says so; `None` where the system says
/// nothing. Limits, not what is free at the moment, so that the same input is refused or
/// accepted the same way in the same setting whatever else runs. Read once per process.
pub fn limit() -> Option<u64> {
    static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        [total(), address_space(), control_group()]
            .into_iter()
            .flatten()
            .min()
    })
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

/// The memory limit of the process's control group, where one is set: the least of the
/// limits of its group and the groups above it (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), as `/proc/self/cgroup` names them.
fn control_group() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    group_limit(&groups, |file| {
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    })
}

/// [`control_group`] on the text of `/proc/self/cgroup`, reading a limit file with `read`.
fn group_limit(groups: &str, read: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    let mut least: Option<u64> = None;
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (root, file) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            continue;
        };
        // the group, then each group above it, up to the root
        let mut group = path.trim_end_matches('/');
        loop {
            if let Some(v) = read(&format!("{root}{group}/{file}")) {
                least = Some(least.map_or(v, |l| l.min(v)));
            }
            match group.rfind('/') {
                Some(i) => group = &group[..i],
                None => break,
            }
        }
    }
    least
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
        }
    }

    #[test]
    fn a_control_groups_limit_is_the_least_on_its_way_to_the_root() {
        let files = |f: &str| match f {
            "/sys/fs/cgroup/job/step/memory.max" => Some(8 << 30),
            "/sys/fs/cgroup/job/memory.max" => Some(4 << 30),
            "/sys/fs/cgroup/memory.max" => None, // "max"
            "/sys/fs/cgroup/memory/slurm/memory.limit_in_bytes" => Some(2 << 30),
            _ => None,
        };
        assert_eq!(group_limit("0::/job/step\n", files), Some(4 << 30));
        assert_eq!(group_limit("0::/\n", files), None);
        assert_eq!(
            group_limit("4:cpu,memory:/slurm/uid\n3:pids:/x\n", files),
            Some(2 << 30)
        );
        assert_eq!(group_limit("garbage\n", files), None);
    }
}
