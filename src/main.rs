//! The `parsim` command line. Exit codes: 0 success, 1 a validation verdict failed, 2 bad input
//! or I/O.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::huge_pages::reexec();
    match cli::main() {
        Ok(code) => code,
        Err(err) => {
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("parsim: {err:#}");
            ExitCode::from(2)
        }
    }
}
