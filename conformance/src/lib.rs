//! The shardroute conformance suite: the generator of `vectors/*.json` and the Rust
//! runner, and the topology documents they and the measuring programs build. The format
//! is specified in `conformance/README.md`.

pub mod documents;
pub mod generate;
pub mod report;
pub mod run;
pub mod session;
pub mod write;

use std::path::PathBuf;

/// The directory of this crate (`conformance/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The committed vector files' directory.
pub fn vectors_dir() -> PathBuf {
    root().join("vectors")
}
