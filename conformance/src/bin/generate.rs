//! Writes `conformance/vectors/*.json` from the core. Run after a deliberate routing
//! change and review the diff: `cargo run -p shardroute-conformance --bin generate-vectors`.

fn main() {
    let dir = shardroute_conformance::vectors_dir();
    // Generate everything first: a generator that panics leaves the committed files alone.
    let files = shardroute_conformance::generate::all();
    std::fs::create_dir_all(&dir).expect("create vectors dir");
    for entry in std::fs::read_dir(&dir).expect("read vectors dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|ext| ext == "json") {
            std::fs::remove_file(&path).expect("remove stale vector file");
        }
    }
    let mut cases = 0;
    for (name, text) in files {
        cases += text.lines().filter(|line| line.trim_start().starts_with("{\"name\"")).count();
        std::fs::write(dir.join(&name), text).expect("write vector file");
        println!("wrote {name}");
    }
    println!("{cases} cases");
}
