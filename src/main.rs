//! The `parsim` command line. Exit codes: 0 success, 1 a validation verdict failed, 2 bad input
//! or I/O.

mod cli;

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    cli::huge_pages::reexec();
    // what standard output still buffers is written here, so that a failure to write it is
    // reported (std would drop it silently at exit)
    let result = cli::main().and_then(|code| {
        parsim::files::stdout().flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            if err.chain().any(is_broken_pipe) {
                return ExitCode::SUCCESS;
            }
            // names from the input may hold control characters: none reaches the terminal
            eprintln!(
                "parsim: {}",
                parsim::report::printable(&format!("{err:#}"), true)
            );
            ExitCode::from(2)
        }
    }
}

/// True when `e` is a write to a closed pipe (`parsim ... | head`), which ends the command
/// quietly: an I/O error of that kind, or serde's error of writing JSON into one (whose chain
/// does not hold the I/O error itself).
fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let pipe = Some(std::io::ErrorKind::BrokenPipe);
    e.downcast_ref::<std::io::Error>().map(std::io::Error::kind) == pipe
        || e.downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind)
            == pipe
}
