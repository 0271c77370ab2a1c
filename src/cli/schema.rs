//! `parsim schema`.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;

/// Options of `parsim schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {}

/// Prints the JSON Schema of a scenario file.
pub fn run(_: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let schema = parsim::scenario::schema::scenario_schema();
    writeln!(
        parsim::files::stdout(),
        "{}",
        serde_json::to_string_pretty(&schema)?
    )?;
    Ok(ExitCode::SUCCESS)
}
