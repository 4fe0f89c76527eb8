//! Inputs that must be refused, or read, within bounds: documents past the core's 64 MiB
//! limit (read no further than it), endless key lines, key files read as they are routed,
//! `--sample` past its maximum, weights that are not finite numbers, and a plan by load
//! that moves nothing. Memory is bounded by running the binary under an address-space
//! limit (`ulimit -v`), never by timing it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");
/// The core's document limit (`shardroute::limits::MAX_DOCUMENT_BYTES`).
const LIMIT: u64 = 64 << 20;
/// The address space the binary runs in, in KiB: room for the code, its libraries and one
/// document at the limit, far from the gigabytes an unbounded read of /dev/zero reaches.
const ADDRESS_SPACE_KIB: u64 = 400 << 10;

/// `shardroute ARGS` under [`ADDRESS_SPACE_KIB`], with no input.
fn bounded(args: &[&str]) -> Output {
    Command::new("sh")
        .args(["-c", &format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""), CLI])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn refused(output: &Output, words: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(words), "{stderr}");
}

struct Scratch(TempDir);

impl Scratch {
    fn new() -> Scratch {
        Scratch(TempDir::new().unwrap())
    }

    fn json(&self, name: &str, value: &Value) -> String {
        let path = self.0.path().join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

fn vbuckets(weights: Option<&[f64]>) -> Value {
    let nodes = ["a", "b", "c"];
    let map: Vec<Value> = (0..24).map(|v| json!([nodes[v % 3]])).collect();
    let nodes: Vec<Value> = match weights {
        Some(weights) => nodes.iter().zip(weights).map(|(id, w)| json!({"id": id, "weight": w})).collect(),
        None => nodes.iter().map(|id| json!({"id": id})).collect(),
    };
    json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes,
           "strategy": {"type": "vbucket", "vbuckets": 24, "map": map}})
}

fn ring() -> Value {
    json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "ring"}})
}

#[test]
fn a_document_past_the_limit_is_refused_after_reading_at_most_the_limit() {
    // An endless input: refused with the core's code, not read to the end of memory.
    for args in
        [&["validate", "/dev/zero"][..], &["route", "/dev/zero", "k"], &["convert", "--from", "cassandra", "/dev/zero"]]
    {
        refused(
            &bounded(args),
            &format!("/dev/zero: limit_exceeded: the document is more than {LIMIT} bytes; the limit is {LIMIT}"),
        );
    }
    // A file one byte past it (sparse): its size in the core's own words, nothing read.
    let scratch = Scratch::new();
    let big = scratch.path("big.json");
    std::fs::File::create(&big).unwrap().set_len(LIMIT + 1).unwrap();
    refused(
        &bounded(&["validate", big.to_str().unwrap()]),
        &format!("limit_exceeded: the document is {} bytes; the limit is {LIMIT}", LIMIT + 1),
    );
    // Weights for a plan by load are read the same way.
    let topology = scratch.json("vb.json", &vbuckets(None));
    refused(
        &bounded(&["plan", &topology, "--vbucket-weights", "/dev/zero"]),
        "/dev/zero: limit_exceeded: the document is more than",
    );
}

#[test]
fn a_key_line_past_the_limit_is_refused_and_key_files_are_read_line_by_line() {
    let scratch = Scratch::new();
    let topology = scratch.json("ring.json", &ring());
    for command in ["route", "stats", "diff"] {
        let mut args = vec![command, &topology];
        if command == "diff" {
            args.push(&topology);
        }
        args.extend(["--keys", "/dev/zero"]);
        refused(&bounded(&args), "/dev/zero:1: limit_exceeded: a key line longer than 65535 bytes");
    }
    // The longest key taken, with either line end; one byte more is refused.
    let longest = "k".repeat(65_535);
    let keys = scratch.path("keys.txt");
    std::fs::write(&keys, format!("first\n{longest}\r\n{longest}\n")).unwrap();
    let output = bounded(&["route", &topology, "--keys", keys.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 3);
    std::fs::write(&keys, format!("first\n{longest}k\n")).unwrap();
    refused(&bounded(&["route", &topology, "--keys", keys.to_str().unwrap()]), "keys.txt:2: limit_exceeded");

    // Keys on stdin are routed as they come: the first answer is out while stdin is open.
    let mut route = Command::new(CLI)
        .args(["route", &topology, "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = route.stdin.take().unwrap();
    stdin.write_all(b"first-key\n").unwrap();
    stdin.flush().unwrap();
    let stdout = route.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = sender.send(line.unwrap());
        }
    });
    // Generous: the line comes at once; a reader that waits for the end of stdin never sends it.
    let first = lines.recv_timeout(Duration::from_secs(60));
    drop(stdin);
    let _ = route.kill();
    let _ = route.wait();
    assert!(first.as_deref().is_ok_and(|line| line.starts_with(r#"{"key":"first-key""#)), "{first:?}");
}

#[test]
fn a_sample_past_the_maximum_is_refused() {
    let scratch = Scratch::new();
    let topology = scratch.json("ring.json", &ring());
    for sample in ["1000000001", "18446744073709551615"] {
        refused(
            &bounded(&["stats", &topology, "--sample", sample]),
            &format!("--sample {sample}: limit_exceeded: at most 1,000,000,000 sampled keys"),
        );
        refused(&bounded(&["diff", &topology, &topology, "--sample", sample]), "limit_exceeded");
        refused(&bounded(&["plan", &topology, "--add", "c", "--sample", sample]), "limit_exceeded");
    }
}

#[test]
fn weights_that_are_not_finite_numbers_are_refused() {
    let scratch = Scratch::new();
    for topology in [scratch.json("vb.json", &vbuckets(None)), scratch.json("ring.json", &ring())] {
        for (flag, spec) in [
            ("--add", "c:NaN"),
            ("--add", "c:inf"),
            ("--add", "c:-inf"),
            ("--add", "c:infinity"),
            ("--reweight", "a:NaN"),
            ("--reweight", "a:inf"),
        ] {
            let weight = spec.split_once(':').unwrap().1;
            refused(
                &bounded(&["plan", &topology, flag, spec]),
                &format!("{flag} {spec:?}: invalid_argument: the weight {weight} is not a finite number"),
            );
        }
    }
}

#[test]
fn a_plan_by_load_that_moves_nothing_succeeds() {
    let scratch = Scratch::new();
    // Three nodes holding 8 vbuckets each, every vbucket weighing the same: balanced.
    let topology = scratch.json("vb.json", &vbuckets(None));
    let weights = scratch.json("weights.json", &json!(vec![1; 24]));
    let output = bounded(&["plan", &topology, "--vbucket-weights", &weights, "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let planned: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(planned["moved"], 0);
    assert_eq!(planned["moves"], json!([]));
    assert_eq!(planned["topology"]["strategy"]["map"], vbuckets(None)["strategy"]["map"]);
    for node in planned["nodes"].as_array().unwrap() {
        assert_eq!((node["before"].as_u64(), node["after"].as_u64()), (Some(8), Some(8)), "{node}");
    }
    let output = bounded(&["plan", &topology, "--vbucket-weights", &weights]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("nothing to move: every one of the 24 active vbuckets stays where it is\n"), "{text}");
}
