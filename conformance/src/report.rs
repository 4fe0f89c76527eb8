//! The Rust runner's report, shared by its test (`tests/vectors.rs`, the `rust` runner of
//! `make test`) and its program (`examples/runner.rs`, which `make test-dist-full` builds as
//! a static musl binary for x86_64 and aarch64: scripts/test-dist-emulated.py): run every
//! vector, print the summary line every runner prints, write the count file.

use std::path::PathBuf;

use crate::run::{run_dir, Outcome};

/// Runs every case of `vectors/` whose name contains `SHARDROUTE_VECTORS_FILTER` (all when
/// unset), prints each failure on stderr and `conformance <runner>: N passed, M failed,
/// 0 skipped`, and writes `target/conformance/<runner>.json` (conformance/README.md,
/// "Runners").
///
/// # Panics
///
/// When `runner` is not a name of ASCII letters, digits, `-` and `_` (it names a file),
/// or the count file cannot be written.
pub fn run_and_report(runner: &str) -> Outcome {
    assert!(
        !runner.is_empty() && runner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "a runner's name is letters, digits, dashes and underscores, not {runner:?}"
    );
    let filter = std::env::var("SHARDROUTE_VECTORS_FILTER").unwrap_or_default();
    let outcome = run_dir(&crate::vectors_dir(), &filter);
    for (name, reason) in &outcome.failures {
        eprintln!("FAILED {name}: {reason}");
    }
    let failed = outcome.failures.len();
    println!("conformance {runner}: {} passed, {failed} failed, 0 skipped", outcome.passed);
    let counts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/conformance");
    std::fs::create_dir_all(&counts).expect("create target/conformance");
    std::fs::write(
        counts.join(format!("{runner}.json")),
        format!("{{\"runner\": \"{runner}\", \"passed\": {}, \"failed\": {failed}, \"skipped\": 0}}\n", outcome.passed),
    )
    .expect("write count file");
    outcome
}
