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
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
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
