//! The `shardroute` binary from the outside: each subcommand's output, and every way it
//! exits with an error (bad file, bad JSON, unknown flag, a problem found).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::{contains, starts_with};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A scratch folder with files written into it.
struct Scratch(TempDir);

impl Scratch {
    fn new() -> Scratch {
        Scratch(TempDir::new().expect("temp dir"))
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    fn json(&self, name: &str, value: &Value) -> PathBuf {
        self.write(name, &value.to_string())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

fn shardroute() -> Command {
    Command::cargo_bin("shardroute").expect("the binary")
}

/// `shardroute ARGS...` with no standard input, run to its end.
fn run<const N: usize>(args: [&str; N]) -> assert_cmd::assert::Assert {
    shardroute().args(args).assert()
}

fn doc(nodes: &[&str], strategy: Value) -> Value {
    let nodes: Vec<Value> = nodes.iter().map(|id| json!({"id": id})).collect();
    json!({"format": "shardroute/1", "epoch": 1, "nodes": nodes, "strategy": strategy})
}

fn ring() -> Value {
    let mut ring = doc(&["a", "b", "c"], json!({"type": "ring"}));
    ring["nodes"][0]["address"] = json!("10.0.0.1:6379");
    ring
}

fn modulo(n: usize) -> Value {
    let ids: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut document = doc(&ids, json!({"type": "modulo"}));
    document["hashing"] = json!({"integers": "identity"});
    document
}

fn stdout_of(command: &mut Command) -> String {
    let output = command.output().expect("run");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf-8")
}

fn json_of(command: &mut Command) -> Value {
    serde_json::from_str(&stdout_of(command)).expect("one JSON object")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn route_prints_key_shard_node_and_replicas() {
    let scratch = Scratch::new();
    let topology = scratch.json("modulo.json", &modulo(3));
    run(["route", arg(&topology), "--u64", "7", "9", "--replicas", "2"])
        .success()
        .stdout("7\t1\ts1\ts1,s2\n9\t0\ts0\ts0,s1\n")
        .stderr("");
    run(["route", arg(&topology), "--u64", "7", "--json"])
        .success()
        .stdout("{\"key\":7,\"shard\":1,\"node\":\"s1\"}\n");
}

#[test]
fn route_reads_keys_from_a_file_or_stdin_and_the_topology_from_stdin() {
    let scratch = Scratch::new();
    let topology = scratch.json("modulo.json", &modulo(4));
    let keys = scratch.write("keys.txt", "1\r\n2\n\n3\n");
    run(["route", arg(&topology), "--u64", "--keys", arg(&keys)]).success().stdout("1\t1\ts1\n2\t2\ts2\n3\t3\ts3\n");
    shardroute()
        .args(["route", arg(&topology), "--u64"])
        .write_stdin("5\n6\n")
        .assert()
        .success()
        .stdout("5\t1\ts1\n6\t2\ts2\n");
    shardroute()
        .args(["route", "-", "--u64", "4"])
        .write_stdin(modulo(4).to_string())
        .assert()
        .success()
        .stdout("4\t0\ts0\n");
    // Text keys and integer keys are different keys.
    run(["explain", arg(&topology), "4"]).success().stdout(contains("hash      siphash-2-4: "));
    run(["explain", arg(&topology), "4", "--u64"])
        .success()
        .stdout(contains("hash      identity: 0x0000000000000004 (4)\n"));
}

#[test]
fn route_refuses_bad_keys_and_two_stdins() {
    let scratch = Scratch::new();
    let topology = scratch.json("modulo.json", &modulo(4));
    let keys = scratch.write("keys.txt", "1\nten\n");
    run(["route", arg(&topology), "--u64", "--keys", arg(&keys)])
        .code(2)
        .stderr(format!("shardroute: {}:2: \"ten\" is not an unsigned 64-bit integer (--u64)\n", arg(&keys)));
    shardroute().args(["route", "-"]).write_stdin("{}").assert().code(2).stderr(contains("only one input can be `-`"));
    let ids = scratch.json("ids.json", &doc(&["a"], json!({"type": "id_bits", "layout": "shard_high"})));
    run(["route", arg(&ids), "not-an-id"]).code(2).stderr(starts_with("shardroute: key \"not-an-id\": invalid_key"));
}

#[test]
fn explain_shows_the_hash_tag_the_slot_and_why() {
    let scratch = Scratch::new();
    let topology = scratch.json("redis.json", &doc(&["m1", "m2", "m3"], json!({"type": "redis_cluster"})));
    let text = stdout_of(shardroute().args(["explain", arg(&topology), "{user1000}.following"]));
    assert!(text.contains("hashed    \"user1000\" (the hash tag), 8 bytes: 7573657231303030\n"), "{text}");
    assert!(text.contains("hash      crc16-xmodem: "), "{text}");
    assert!(text.contains("strategy  redis_cluster\n"), "{text}");
    assert!(text.contains("hit       slot "), "{text}");
    assert!(text.contains("why       crc16-xmodem(hash tag \"user1000\") = 0x"), "{text}");
    let explained = json_of(shardroute().args(["explain", arg(&topology), "{user1000}.following", "--json"]));
    assert_eq!(explained["hashed"]["input"], "user1000");
    assert_eq!(explained["hashed"]["tagged"], true);
    let routed = stdout_of(shardroute().args(["route", arg(&topology), "user1000"]));
    assert_eq!(routed, format!("user1000\t{}\t{}\n", explained["shard"], explained["node"].as_str().unwrap()));
    assert_eq!(explained["replicas"].as_array().unwrap().len(), 1, "a slot range of one master");
}

#[test]
fn explain_names_vbuckets_ranges_and_the_owner_address() {
    let scratch = Scratch::new();
    let vbuckets = scratch.json("vb.json", &doc(&["a", "b"], json!({"type": "vbucket", "vbuckets": 8})));
    let explained = json_of(shardroute().args(["explain", arg(&vbuckets), "user:1", "--json"]));
    let vbucket = explained["shard"].as_u64().unwrap();
    assert_eq!(explained["hit"], format!("vbucket {vbucket} of 8"));
    assert!(explained["why"].as_str().unwrap().contains(&format!("% 8 = vbucket {vbucket}")));
    let ranges = scratch.json(
        "kr.json",
        &doc(&["a", "b"], json!({"type": "key_range", "boundaries": [{"utf8": "m"}], "ranges": ["a", "b"]})),
    );
    run(["explain", arg(&ranges), "zebra"])
        .success()
        .stdout(contains("hashed    nothing: the strategy reads the key itself\n"))
        .stdout(contains("hit       range 1 [\"m\", end)\n"))
        .stdout(contains("why       the key sorts into range 1 [\"m\", end), owned by \"b\"\n"));
    let topology = scratch.json("ring.json", &ring());
    let text = stdout_of(shardroute().args(["explain", arg(&topology), "k", "--replicas", "3"]));
    let owner = text.lines().find_map(|line| line.strip_prefix("owner     ")).unwrap();
    assert!(owner == "a (10.0.0.1:6379)" || owner == "b" || owner == "c", "{owner}");
    assert!(text.contains("hit       ring point 0x"), "{text}");
}

#[test]
fn validate_says_ok_or_names_the_problem() {
    let scratch = Scratch::new();
    let good = scratch.json("good.json", &ring());
    run(["validate", arg(&good)]).success().stdout(format!("ok: {}: ring, 3 nodes, epoch 1\n", arg(&good)));
    let mut typo = ring();
    typo["strategy"] = json!({"type": "ring", "point_per_node": 10});
    let typo = scratch.json("typo.json", &typo);
    run(["validate", arg(&typo)]).code(1).stdout("").stderr(format!(
        "shardroute: {}: invalid_topology: strategy.point_per_node: unknown field; expected one of: type, points_per_node; did you mean `points_per_node`?\n",
        arg(&typo)
    ));
    let mut weight = ring();
    weight["nodes"][2]["weight"] = json!(-1);
    shardroute()
        .args(["validate", "-"])
        .write_stdin(weight.to_string())
        .assert()
        .code(1)
        .stderr(starts_with("shardroute: <stdin>: invalid_topology: nodes[2].weight: must be a finite number > 0"));
}

#[test]
fn bad_files_and_bad_json_exit_2_naming_the_input() {
    let scratch = Scratch::new();
    let missing = scratch.path("missing.json");
    let broken = scratch.write("broken.json", "{\"format\": ");
    for command in ["validate", "stats", "explain"] {
        let mut args = vec![command, arg(&missing)];
        if command == "explain" {
            args.push("k");
        }
        shardroute()
            .args(&args)
            .assert()
            .code(2)
            .stderr(starts_with(format!("shardroute: {}: cannot read: ", arg(&missing))));
        args[1] = arg(&broken);
        shardroute().args(&args).assert().code(2).stderr(format!(
            "shardroute: {}: not valid JSON: EOF while parsing a value at line 1 column 11\n",
            arg(&broken)
        ));
    }
    // A document the core refuses is bad input for every command but validate.
    let typo = scratch.json("typo.json", &doc(&["a"], json!({"type": "rign"})));
    run(["route", arg(&typo), "k"])
        .code(2)
        .stderr(contains("strategy.type: unknown strategy \"rign\"").and(contains("did you mean `ring`?")));
}

#[test]
fn unknown_flags_and_commands_exit_2() {
    run(["route", "--bogus"]).code(2).stderr(contains("unexpected argument '--bogus'"));
    run(["reroute"]).code(2).stderr(contains("unrecognized subcommand 'reroute'"));
    shardroute().assert().code(2).stderr(contains("Usage: shardroute <COMMAND>"));
    run(["convert", "--from", "mysql", "x.json"]).code(2).stderr(contains("invalid value 'mysql'"));
    shardroute().arg("--version").assert().success().stdout(starts_with("shardroute "));
}

#[test]
fn plan_adds_and_removes_nodes_of_a_ring_and_measures_the_move() {
    let scratch = Scratch::new();
    let topology = scratch.json("ring.json", &ring());
    let out = scratch.path("next.json");
    let text =
        stdout_of(shardroute().args(["plan", arg(&topology), "--add", "d:2", "--remove", "b", "--out", arg(&out)]));
    assert!(text.starts_with("ring: epoch 1 -> 2; moved "), "{text}");
    assert!(text.contains(&format!("new topology (epoch 2) written to {}", arg(&out))), "{text}");
    let next: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ids: Vec<&str> = next["nodes"].as_array().unwrap().iter().map(|node| node["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "c", "d"]);
    assert_eq!(next["nodes"][2]["weight"], 2.0);
    run(["validate", arg(&out)]).success();

    let planned = json_of(shardroute().args(["plan", arg(&topology), "--add", "d", "--sample", "20000", "--json"]));
    assert_eq!(planned["unit"], "keys");
    assert_eq!(planned["total"], 20000);
    // Only keys landing on the new node move, about a quarter of them.
    let moved = planned["moved"].as_u64().unwrap();
    assert!((3500..6500).contains(&moved), "{moved}");
    assert!(planned["moves"].as_array().unwrap().iter().all(|mv| mv["to"] == "d"));
    let nodes = planned["nodes"].as_array().unwrap();
    assert_eq!(nodes.last().unwrap(), &json!({"id": "d", "before": 0, "after": moved}));
    let reweighted = json_of(shardroute().args(["plan", arg(&topology), "--reweight", "a:3", "--json"]));
    assert_eq!(reweighted["topology"]["nodes"][0]["weight"], 3.0);
}

#[test]
fn plan_rebalances_a_vbucket_dictionary() {
    let scratch = Scratch::new();
    let map: Vec<Value> = (0..12).map(|v| Value::from(vec![["a", "b", "c"][v % 3]])).collect();
    let topology =
        scratch.json("vb.json", &doc(&["a", "b", "c"], json!({"type": "vbucket", "vbuckets": 12, "map": map})));
    let planned = json_of(shardroute().args(["plan", arg(&topology), "--add", "d", "--json"]));
    assert_eq!(planned["unit"], "vbuckets");
    assert_eq!(planned["moved"], 3, "d takes its quarter of 12 and no more");
    assert_eq!(
        planned["nodes"],
        json!([{"id": "a", "before": 4, "after": 3}, {"id": "b", "before": 4, "after": 3},
               {"id": "c", "before": 4, "after": 3}, {"id": "d", "before": 0, "after": 3}])
    );
    assert!(planned["topology"]["strategy"]["forward_map"].is_array());
    let text = stdout_of(shardroute().args(["plan", arg(&topology), "--fail", "c"]));
    assert!(text.starts_with("plan_rebalance: vbucket dictionary, epoch 1 -> 2\n"), "{text}");
    assert!(text.contains("node  vbuckets before  after\n"), "{text}");
}

#[test]
fn plan_balances_a_vbucket_dictionary_by_load() {
    let scratch = Scratch::new();
    // 24 vbuckets over a, b, c in turn; the ones a holds are heavy.
    let nodes = ["a", "b", "c"];
    let map: Vec<Value> = (0..24).map(|v| Value::from(vec![nodes[v % 3]])).collect();
    let weights: Vec<u64> = (0..24u64).map(|v| if v % 3 == 0 { 50 + v } else { 1 + v % 5 }).collect();
    let topology = scratch.json("vb.json", &doc(&nodes, json!({"type": "vbucket", "vbuckets": 24, "map": map})));
    let file = scratch.json("weights.json", &json!(weights));
    let planned =
        json_of(shardroute().args(["plan", arg(&topology), "--add", "d", "--vbucket-weights", arg(&file), "--json"]));

    // Each node's load, summed here from the maps and the weights: before from the
    // document, after from the forward map the plan wrote.
    let load_of = |map: &Value, node: &str| -> u64 {
        map.as_array().unwrap().iter().zip(&weights).filter(|(chain, _)| chain[0] == node).map(|(_, w)| *w).sum()
    };
    let forward = &planned["topology"]["strategy"]["forward_map"];
    let total: u64 = weights.iter().sum();
    let heaviest = *weights.iter().max().unwrap();
    let reported = planned["load"].as_array().unwrap();
    assert_eq!(reported.len(), 4);
    let mut targets = 0;
    for (entry, node) in reported.iter().zip(["a", "b", "c", "d"]) {
        assert_eq!(entry["id"], node);
        assert_eq!(entry["before"], load_of(&json!(map), node), "{node}");
        assert_eq!(entry["after"], load_of(forward, node), "{node}");
        let target = entry["target"].as_u64().unwrap();
        // The planner's bound: at most the target plus the heaviest vbucket less 1.
        assert!(entry["after"].as_u64().unwrap() < target + heaviest, "{node}: {entry}");
        targets += target;
    }
    assert_eq!(targets, total, "the targets share out the whole load");
    // Four equal nodes: every target is a quarter of the load, to within one.
    assert!(reported.iter().all(|entry| entry["target"].as_u64().unwrap().abs_diff(total / 4) <= 1));
    let moved = forward.as_array().unwrap().iter().zip(&map).filter(|(new, old)| new[0] != old[0]).count();
    assert_eq!(planned["moved"], moved as u64);

    let text = stdout_of(shardroute().args(["plan", arg(&topology), "--add", "d", "--vbucket-weights", arg(&file)]));
    assert!(text.starts_with("plan_rebalance: vbucket dictionary by load, epoch 1 -> 2\n"), "{text}");
    assert!(text.contains("node  load before  after  target\n"), "{text}");

    // Load alone, the nodes unchanged: the heavy vbuckets a holds are spread over a, b, c.
    let spread = json_of(shardroute().args(["plan", arg(&topology), "--vbucket-weights", arg(&file), "--json"]));
    let forward = &spread["topology"]["strategy"]["forward_map"];
    let loads: Vec<&Value> = spread["load"].as_array().unwrap().iter().collect();
    assert_eq!(loads.len(), 3);
    for (entry, node) in loads.iter().zip(nodes) {
        assert_eq!(entry["before"], load_of(&json!(map), node), "{node}");
        assert_eq!(entry["after"], load_of(forward, node), "{node}");
        assert!(entry["after"].as_u64().unwrap() < entry["target"].as_u64().unwrap() + heaviest, "{node}: {entry}");
    }
    let before_max = nodes.iter().map(|node| load_of(&json!(map), node)).max().unwrap();
    let after_max = nodes.iter().map(|node| load_of(forward, node)).max().unwrap();
    assert!(after_max < before_max, "the heaviest node got lighter: {before_max} -> {after_max}");
    assert!(spread["moved"].as_u64().unwrap() > 0);

    // Refused: a count that is not one per vbucket, text that is not JSON, stdin named for
    // both inputs, and a strategy that has no vbuckets.
    let short = scratch.json("short.json", &json!([1, 2]));
    run(["plan", arg(&topology), "--add", "d", "--vbucket-weights", arg(&short)])
        .code(2)
        .stderr(contains("operation.vbucket_weights: expected 24 weights, one per vbucket, found 2"));
    let garbage = scratch.write("garbage.json", "1 2 3");
    run(["plan", arg(&topology), "--add", "d", "--vbucket-weights", arg(&garbage)])
        .code(2)
        .stderr(contains("garbage.json: not valid JSON"));
    run(["plan", "-", "--add", "d", "--vbucket-weights", "-"]).code(2).stderr(contains("only one input can be `-`"));
    let ring = scratch.json("ring.json", &ring());
    run(["plan", arg(&ring), "--add", "d", "--vbucket-weights", arg(&file)])
        .code(2)
        .stderr(contains("only a vbucket dictionary is planned by load"));
}

#[test]
fn plan_refuses_what_the_strategy_cannot_do() {
    let scratch = Scratch::new();
    let redis = scratch.json("redis.json", &doc(&["a", "b"], json!({"type": "redis_cluster"})));
    run(["plan", arg(&redis), "--add", "c"]).code(2).stderr(format!(
        "shardroute: {}: invalid_argument: add_node: the redis_cluster strategy's placement is a table; use its own operations\n",
        arg(&redis)
    ));
    let topology = scratch.json("ring.json", &ring());
    run(["plan", arg(&topology)]).code(2).stderr(contains("nothing to change"));
    run(["plan", arg(&topology), "--remove", "zz"]).code(2).stderr(contains("zz"));
    run(["plan", arg(&topology), "--reweight", "a"]).code(2).stderr(contains("expected ID:WEIGHT"));
}

#[test]
fn diff_reports_the_moved_fraction_and_the_flow_matrix() {
    let scratch = Scratch::new();
    let (five, ten) = (scratch.json("five.json", &modulo(5)), scratch.json("ten.json", &modulo(10)));
    let ids: String = (0..1000).map(|id| format!("{id}\n")).collect();
    let keys = scratch.write("ids.txt", &ids);
    let text = stdout_of(shardroute().args(["diff", arg(&five), arg(&ten), "--keys", arg(&keys), "--u64"]));
    assert!(text.starts_with("moved 50.00% (500 of 1,000 keys)\n\nfrom \\ to   s0   s1"), "{text}");
    assert!(text.contains("\ns0         100    0    0    0    0  100    0    0    0    0\n"), "{text}");
    let report = json_of(shardroute().args(["diff", arg(&five), arg(&ten), "--keys", arg(&keys), "--u64", "--json"]));
    assert_eq!(report["moved"], 500);
    assert_eq!(report["moved_fraction"], 0.5);
    assert_eq!(report["flows"][0], json!({"from": "s0", "to": "s0", "keys": 100, "moved": false}));
    let same = stdout_of(shardroute().args(["diff", arg(&five), arg(&five), "--sample", "1000"]));
    assert!(same.starts_with("moved 0.00% (0 of 1,000 sampled keys)"), "{same}");
    run(["diff", "-", "-"]).code(2).stderr(contains("only one input"));
}

#[test]
fn stats_measures_the_load_and_draws_it() {
    let scratch = Scratch::new();
    let topology = scratch.json("ring.json", &ring());
    let svg = scratch.path("load.svg");
    let text = stdout_of(shardroute().args(["stats", arg(&topology), "--sample", "30000", "--svg", arg(&svg)]));
    assert!(
        text.starts_with("ring: 30,000 sampled keys over 3 nodes\n\nnode  weight    keys   share  keys/weight\n"),
        "{text}"
    );
    assert!(text.contains("\nkeys per unit of weight: mean 10000.0, max/mean 1."), "{text}");
    let drawing = std::fs::read_to_string(&svg).unwrap();
    assert!(drawing.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(drawing.matches("<rect x=").count(), 3);
    let stats = json_of(shardroute().args(["stats", arg(&topology), "--sample", "30000", "--json"]));
    let cv = stats["cv"].as_f64().unwrap();
    assert!(cv > 0.0 && cv < 0.2, "{cv}");
    let total: u64 = stats["nodes"].as_array().unwrap().iter().map(|node| node["keys"].as_u64().unwrap()).sum();
    assert_eq!(total, 30000);
    // Long runs stay quiet when stderr is not a terminal.
    run(["stats", arg(&topology), "--sample", "400000"]).success().stderr("");
    run(["stats", arg(&topology), "--sample", "0"]).code(2).stderr(contains("--sample"));
}

#[test]
fn convert_imports_what_real_systems_report() {
    let scratch = Scratch::new();
    let slots = scratch.json(
        "slots.json",
        &json!([
            [0, 8191, ["10.0.0.1", 6379, "n1"], ["10.0.0.2", 6379, "r1"]],
            [8192, 16383, ["10.0.0.3", 6379, "n2"]]
        ]),
    );
    let document = json_of(shardroute().args(["convert", "--from", "redis-slots", arg(&slots)]));
    assert_eq!(document["strategy"]["type"], "redis_cluster");
    assert_eq!(document["epoch"], 1);
    assert_eq!(document["nodes"].as_array().unwrap().len(), 3);
    let out = scratch.path("cassandra.json");
    let tokens =
        scratch.json("tokens.json", &json!({"c1": ["-9000000000000000000", "0"], "c2": ["4000000000000000000"]}));
    run(["convert", "--from", "cassandra", arg(&tokens), "--epoch", "9", "--out", arg(&out)]).success().stdout("");
    run(["validate", arg(&out)]).success().stdout(contains("cassandra, 2 nodes, epoch 9"));
    let config = format!("{}/../conformance/reference/couchbase-bucket-config.json", env!("CARGO_MANIFEST_DIR"));
    let document = json_of(shardroute().args(["convert", "--from", "couchbase", &config]));
    assert_eq!(document["strategy"]["type"], "couchbase");
    run(["convert", "--from", "redis-shards", arg(&tokens)])
        .code(2)
        .stderr(starts_with(format!("shardroute: {}: invalid_argument: ", arg(&tokens))));
}

/// A document that declares its keys integers (`"keys": "u64"`): the decimal text of an
/// integer routes as the integer without `--u64`, in `route`, `explain` and `stats`, and
/// any other text is refused with the core's code and words.
#[test]
fn a_document_that_declares_u64_keys_routes_their_text_as_integers() {
    let scratch = Scratch::new();
    let mut declared = modulo(5);
    declared["hashing"]["keys"] = json!("u64");
    let topology = scratch.json("declared.json", &declared);
    run(["route", arg(&topology), "7", "18446744073709551615"])
        .success()
        .stdout("7\t2\ts2\n18446744073709551615\t0\ts0\n");
    run(["route", arg(&topology), "--u64", "7"]).success().stdout("7\t2\ts2\n");
    run(["route", arg(&topology), "7", "--json"]).success().stdout("{\"key\":7,\"shard\":2,\"node\":\"s2\"}\n");
    let keys = scratch.write("keys.txt", "7\n42\n");
    run(["route", arg(&topology), "--keys", arg(&keys)]).success().stdout("7\t2\ts2\n42\t2\ts2\n");
    run(["explain", arg(&topology), "7"]).success().stdout(contains("hash      identity: 0x0000000000000007 (7)\n"));
    let refused = |key: &str| format!("key {key:?} is not a u64 in decimal (the document's hashing.keys is \"u64\")");
    for key in ["07", "-1", "1e3", " 7", "18446744073709551616", "abc"] {
        run(["route", arg(&topology), "--", "7", key])
            .code(2)
            .stderr(format!("shardroute: key 2: invalid_key: {}\n", refused(key)));
        run(["explain", arg(&topology), "--", key]).code(2).stderr(contains(refused(key)));
    }
    let bad = scratch.write("bad.txt", "7\n07\n");
    run(["route", arg(&topology), "--keys", arg(&bad)]).code(2).stderr(format!(
        "shardroute: {}:2: invalid_key: {}\n",
        arg(&bad),
        refused("07")
    ));
    // Sampled keys are integers under the declaration (text samples would be refused).
    run(["stats", arg(&topology), "--sample", "1000"]).success();
    // Without the declaration "7" is text, as before.
    let plain = scratch.json("plain.json", &modulo(5));
    run(["explain", arg(&plain), "7"]).success().stdout(contains("hash      siphash-2-4: "));
}
