//! The Rust conformance runner, and the check that the committed vectors are exactly
//! what the generator writes.

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
    let outcome = shardroute_conformance::report::run_and_report("rust");
    let failed = outcome.failures.len();
    assert_eq!(failed, 0, "{failed} conformance cases failed");
    assert!(outcome.passed > 0, "no conformance case ran");
}
