//! The Rust conformance runner as a program: `runner [NAME]` runs every vector and reports
//! as the runner NAME (default `rust`), exiting 1 unless every case passed. `make
//! test-dist-full` builds it as a static musl binary for x86_64 and aarch64 and runs it as
//! `rust-musl-x86_64` and `rust-musl-aarch64` (scripts/test-dist-emulated.py); the test
//! `every_vector_passes_in_rust` (tests/vectors.rs) reports the same way as `rust`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let runner = std::env::args().nth(1).unwrap_or_else(|| "rust".to_owned());
    let outcome = shardroute_conformance::report::run_and_report(&runner);
    if outcome.failures.is_empty() && outcome.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
