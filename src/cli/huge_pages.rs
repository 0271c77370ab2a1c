//! Transparent huge pages for the heap.
//!
//! A program of 10^4 to 10^6 ranks, or a GOAL schedule of millions of operations, touches
//! arrays of tens to hundreds of MB (links, messages, operations, their counters) in an order no
//! cache follows; with 4 KiB pages most of those touches also miss the TLB and walk the page
//! tables. Linux backs memory with 2 MiB pages where a program asks for them
//! (`/sys/kernel/mm/transparent_hugepage/enabled` reading `[madvise]`, the usual default), and
//! glibc (2.35 and later) asks for its whole heap when the tunable `glibc.malloc.hugetlb=1` is
//! set; glibc reads its tunables only when a process starts. So, on such a system, parsim runs
//! itself again once, at the start, with the tunable added to `GLIBC_TUNABLES` and
//! `PARSIM_HUGE_PAGES=on` (which stops a second re-execution), the user's own `GLIBC_TUNABLES`
//! kept aside in `PARSIM_USER_GLIBC_TUNABLES`; a process parsim starts (`slurm --submit`, and
//! through it every job) gets the environment as the user had it ([`user_environment`]), so
//! the jobs' parsim re-executes itself as the first did. Results do not depend on it;
//! speed does (the performance guide has the figures). `PARSIM_HUGE_PAGES` set to anything
//! beforehand (`off`) keeps the pages as they are. With `[always]` or `[never]`, another C
//! library, or any failure to re-execute, parsim simply runs on.

use std::ffi::{OsStr, OsString};

/// The variable that turns the re-execution off (any value) and marks a re-executed process.
const SWITCH: &str = "PARSIM_HUGE_PAGES";

/// The value the re-execution gives [`SWITCH`].
const REEXECUTED: &str = "on";

/// Where the re-execution keeps the user's `GLIBC_TUNABLES` (absent when the user had none).
const USER_TUNABLES: &str = "PARSIM_USER_GLIBC_TUNABLES";

/// glibc's variable of tunables, `name=value` pairs separated by `:`.
const TUNABLES: &str = "GLIBC_TUNABLES";

/// glibc's tunable that makes `malloc` advise huge pages for the memory it maps.
const HUGETLB: &str = "glibc.malloc.hugetlb";

/// Where Linux says when it backs anonymous memory with huge pages.
const THP_MODE: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Re-executes parsim with glibc's huge-page tunable when that would change anything (see the
/// module's documentation); returns only when it does not (or the re-execution failed).
#[cfg(target_os = "linux")]
pub fn reexec() {
    use std::os::unix::process::CommandExt;

    let Ok(mode) = std::fs::read_to_string(THP_MODE) else {
        return;
    };
    let switch = std::env::var_os(SWITCH);
    let existing = std::env::var_os(TUNABLES);
    let Some(tunables) = tunables_with_huge_pages(switch.as_deref(), existing.as_deref(), &mode)
    else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(name) = args.next() {
        command.arg0(name);
    }
    // `exec` replaces this process and returns only on failure: then run on as we are
    if let Some(user) = existing {
        command.env(USER_TUNABLES, user);
    }
    let _ = command
        .args(args)
        .env(TUNABLES, tunables)
        .env(SWITCH, REEXECUTED)
        .exec();
}

/// Gives `command` the environment the user started parsim with: without what the
/// re-execution added (its switch, and the tunable in `GLIBC_TUNABLES`, which gets the user's
/// own value back), so that a parsim it starts decides for itself.
pub fn user_environment(command: &mut std::process::Command) {
    if std::env::var_os(SWITCH).as_deref() != Some(OsStr::new(REEXECUTED)) {
        return;
    }
    command.env_remove(SWITCH);
    match std::env::var_os(USER_TUNABLES) {
        Some(user) => command.env(TUNABLES, user),
        None => command.env_remove(TUNABLES),
    };
    command.env_remove(USER_TUNABLES);
}

/// Elsewhere there is nothing to do.
#[cfg(not(target_os = "linux"))]
pub fn reexec() {}

/// The `GLIBC_TUNABLES` to re-execute with, or `None` to run on: `switch` is
/// `PARSIM_HUGE_PAGES` (set: the user chose, or this is the re-executed process), `existing`
/// the current `GLIBC_TUNABLES`, `mode` the contents of [`THP_MODE`].
fn tunables_with_huge_pages(
    switch: Option<&OsStr>,
    existing: Option<&OsStr>,
    mode: &str,
) -> Option<OsString> {
    if switch.is_some() || !mode.contains("[madvise]") {
        return None;
    }
    let setting = format!("{HUGETLB}=1");
    match existing {
        None => Some(setting.into()),
        Some(t) if t.is_empty() => Some(setting.into()),
        Some(t) => {
            let names_it = t
                .to_string_lossy()
                .split(':')
                .any(|pair| pair.split('=').next() == Some(HUGETLB));
            if names_it {
                // the user set it either way
                return None;
            }
            let mut joined = t.to_owned();
            joined.push(":");
            joined.push(&setting);
            Some(joined)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MADVISE: &str = "always [madvise] never\n";

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn adds_the_tunable_only_where_the_kernel_waits_to_be_asked() {
        assert_eq!(
            tunables_with_huge_pages(None, None, MADVISE),
            Some("glibc.malloc.hugetlb=1".into())
        );
        assert_eq!(
            tunables_with_huge_pages(None, os(""), MADVISE),
            Some("glibc.malloc.hugetlb=1".into())
        );
        // huge pages everywhere already, or never: nothing to gain
        assert_eq!(
            tunables_with_huge_pages(None, None, "[always] madvise never\n"),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(None, None, "always madvise [never]\n"),
            None
        );
    }

    #[test]
    fn keeps_the_users_tunables_and_choice() {
        assert_eq!(
            tunables_with_huge_pages(None, os("glibc.malloc.arena_max=2"), MADVISE),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1".into())
        );
        // the user set the tunable (to anything): leave it
        assert_eq!(
            tunables_with_huge_pages(None, os("glibc.malloc.hugetlb=0"), MADVISE),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(
                None,
                os("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"),
                MADVISE
            ),
            None
        );
        // a longer name that starts the same is another tunable
        assert_eq!(
            tunables_with_huge_pages(None, os("glibc.malloc.hugetlbx=1"), MADVISE),
            Some("glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1".into())
        );
        // PARSIM_HUGE_PAGES set: turned off, or already re-executed
        assert_eq!(tunables_with_huge_pages(os("off"), None, MADVISE), None);
        assert_eq!(tunables_with_huge_pages(os("on"), None, MADVISE), None);
    }
}
