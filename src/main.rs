//! The `agentwire` binary: parse arguments, call the library, print `error: …`, and map
//! outcomes to exit codes (the table is `cli::exit::EXIT_CODES`: 0 ok, 1 error, 2 usage,
//! 3 degraded input, 4 gate tripped).

mod cli;
mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cmd::run(cli::parse()) {
        Ok(code) => code,
        Err(e) => cmd::fail(&e),
    }
}
