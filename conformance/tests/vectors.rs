//! The Rust conformance runner, and the check that the committed vectors are exactly
//! what the generator writes.

use std::path::PathBuf;

#[test]
fn committed_vectors_match_the_generator() {
    let dir = shardroute_conformance::vectors_dir();
    let generated = shardroute_conformance::generate::all();
    let mut committed: Vec<String> = std::fs::read_dir(&dir)
        .expect("conformance/vectors exists")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    committed.sort();
    let mut expected: Vec<String> = generated.iter().map(|(name, _)| name.clone()).collect();
    expected.sort();
    assert_eq!(
        committed, expected,
        "vector files differ from the generator's; run `cargo run -p shardroute-conformance --bin generate-vectors`"
    );
    for (name, text) in generated {
        let on_disk = std::fs::read_to_string(dir.join(&name)).expect("read vector file");
        assert!(
            on_disk == text,
            "conformance/vectors/{name} differs from the generator's output; run `cargo run -p shardroute-conformance --bin generate-vectors` and review the diff"
        );
    }
}

#[test]
fn every_vector_passes_in_rust() {
    let filter = std::env::var("SHARDROUTE_VECTORS_FILTER").unwrap_or_default();
    let outcome = shardroute_conformance::run::run_dir(&shardroute_conformance::vectors_dir(), &filter);
    for (name, reason) in &outcome.failures {
        eprintln!("FAILED {name}: {reason}");
    }
    let failed = outcome.failures.len();
    println!("conformance rust: {} passed, {failed} failed, 0 skipped", outcome.passed);
    let counts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/conformance");
    std::fs::create_dir_all(&counts).expect("create target/conformance");
    std::fs::write(
        counts.join("rust.json"),
        format!("{{\"runner\": \"rust\", \"passed\": {}, \"failed\": {failed}, \"skipped\": 0}}\n", outcome.passed),
    )
    .expect("write count file");
    assert_eq!(failed, 0, "{failed} conformance cases failed");
    assert!(outcome.passed > 0, "no conformance case ran");
}
