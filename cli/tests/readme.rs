//! The transcripts of `cli/README.md` and the repository README run as tests: every `$ `
//! line of a `console` block is run by `sh` in a scratch folder holding the example
//! files, and what it prints (stdout and stderr) must be the lines under it.

use std::path::Path;
use std::process::Command;

const SLOTS: &str =
    r#"[[0, 8191, ["10.0.0.1", 6379, "n1"], ["10.0.0.2", 6379, "r1"]], [8192, 16383, ["10.0.0.3", 6379, "n2"]]]"#;

/// `(command, expected output)` of each `$ ` line of the `console` blocks of `markdown`.
fn transcripts(markdown: &str) -> Vec<(String, String)> {
    let mut runs: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = line == "```console";
            continue;
        }
        if !inside {
            continue;
        }
        match line.strip_prefix("$ ") {
            Some(command) => runs.push((command.to_string(), String::new())),
            None => {
                let (_, output) = runs.last_mut().expect("a block starts with a command");
                output.push_str(line);
                output.push('\n');
            }
        }
    }
    runs
}

fn check(readme: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scratch = tempfile::TempDir::new().unwrap();
    // The README's relative paths (`../../docs/examples/...`) resolve as in cli/examples.
    let here = scratch.path().join("cli/examples");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(scratch.path().join("docs/examples")).unwrap();
    let dictionary = "docs/examples/dictionary-explicit.json";
    std::fs::copy(root.join(dictionary), scratch.path().join(dictionary)).unwrap();
    let cache = std::fs::read_to_string(root.join("cli/examples/cache.json")).unwrap();
    std::fs::write(here.join("cache.json"), &cache).unwrap();
    std::fs::write(here.join("typo.json"), cache.replace("\"weight\": 2", "\"wieght\": 2")).unwrap();
    std::fs::write(here.join("slots.json"), SLOTS).unwrap();
    let binary = Path::new(env!("CARGO_BIN_EXE_shardroute"));
    let path = format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let runs = transcripts(&std::fs::read_to_string(readme).unwrap());
    assert!(!runs.is_empty(), "{} has no console transcript", readme.display());
    // Each line runs in its own shell that starts with the previous line's exit status,
    // so `echo $?` reports it.
    let mut status = 0;
    for (command, expected) in runs {
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("(exit {status}); {command} 2>&1"))
            .current_dir(&here)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "{}: $ {command}", readme.display());
        status = output.status.code().unwrap_or(-1);
    }
}

#[test]
fn the_cli_readme_transcripts_are_what_the_binary_prints() {
    check(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
}

#[test]
fn the_repository_readme_transcript_is_what_the_binary_prints() {
    check(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"));
}
