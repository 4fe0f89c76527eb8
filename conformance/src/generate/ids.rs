//! `ids.json`: the `id_bits` strategy (ids that carry their shard). Published ids
//! (Twitter, Discord, Pinterest) and MySQL's auto-increment series routed to the shard
//! their fields name; ids read off the bit layouts by hand; rejected keys (byte keys,
//! reserved bits, shards and cells the topology lacks, ticket id 0) and rejected
//! documents; and `decode_id`, `shards_for_range` and the
//! generator operations through `apply`. The ticket-server pick (rotation and failover,
//! `reference/ticket-servers.txt`) and the `ulid` layout: the ULID spec's published
//! ULIDs (`reference/ulid-spec.txt`) routed and decoded, ULIDs built from their fields,
//! and rejected text.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{
    applied, apply_refused, expect_error, load_case, refused_key, stated_replicas, stated_route, On, Refusals,
};
use super::keys::{hex, owned_key, u64_key, utf8};
use super::reference::reference_lines;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// A published id from `reference/snowflake-ids.txt`.
struct Published {
    label: String,
    id: u64,
    timestamp_ms: Option<u64>,
    field: u32,
    low: u64,
}

fn published() -> Vec<Published> {
    reference_lines("snowflake-ids.txt")
        .iter()
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(columns.len(), 8, "snowflake-ids.txt: {line}");
            Published {
                label: columns[0].to_string(),
                id: columns[4].parse().expect("id"),
                timestamp_ms: columns[5].parse().ok(),
                field: columns[6].parse().expect("routing field"),
                low: columns[7].parse().expect("low field"),
            }
        })
        .collect()
}

fn reference(label: &str) -> Published {
    published().into_iter().find(|p| p.label == label).unwrap_or_else(|| panic!("no reference {label}"))
}

/// A MySQL series from `reference/mysql-auto-increment.txt`: `(label, offset, increment, counter, ids)`.
fn mysql_series() -> Vec<(String, u32, u32, u64, Vec<u64>)> {
    reference_lines("mysql-auto-increment.txt")
        .iter()
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let number = |i: usize| columns[i].parse::<u64>().expect("number");
            let ids = (4..columns.len()).map(number).collect();
            (columns[0].to_string(), number(1) as u32, number(2) as u32, number(3), ids)
        })
        .collect()
}

/// A route case `<topology>/stated/<what>` of an id whose shard and node are stated
/// by the caller (read off the layout by hand, or from a published source); the core is
/// checked to agree.
fn stated(file: &mut VectorFile, router: &Router, topology: &str, what: &str, id: u64, shard: u32, node: &str) {
    stated_route(file, topology, router, &format!("stated/{what}"), u64_key(id), (shard, node));
}

/// `route`, `replicas` and `route_many` (after the routable id `fine`) cases that must
/// fail with `invalid_key`.
fn rejected(file: &mut VectorFile, router: &Router, topology: &str, what: &str, fine: u64, key: Value) {
    assert!(router.route(fine).is_ok(), "{topology}: {fine} must route");
    let outcome = router.route(owned_key(&key).as_key()).map(drop);
    refused_key(file, topology, &key, Some(u64_key(fine)), outcome, |op| format!("{topology}/rejected/{op}-{what}"));
}

/// A shards table putting shard `s` on `names[s % names.len()]`, for `count` shards.
fn cycling(names: &[&str], count: usize) -> Vec<String> {
    (0..count).map(|s| names[s % names.len()].to_string()).collect()
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "ids",
        "The id_bits strategy: ids that carry their shard in a bit field (shard_high, Snowflake, the top random bits of a ULID) or as a ticket server's residue, with shard tables and cell directories; published ids, rejected keys and documents; decode_id, shards_for_range and the generator operations, the ticket-server pick (rotation and failover) among them.",
        "published ids (reference/snowflake-ids.txt: Wikipedia's Twitter example, Discord's docs and the discord-snowflake npm package, Pinterest's engineering blog; reference/ulid-spec.txt: the ULID spec's README), MySQL manual series (reference/mysql-auto-increment.txt) and the ticket-server rows (reference/ticket-servers.txt: Flickr's ticket-server post and the MySQL manual, read off the rule by hand), copied unchanged; `stated` routes read off the bit layout by hand; everything else: generator",
    );

    // The layout: an 8-bit shard in the top byte, identity shard table.
    let ids = ["s0", "s1", "s2", "s3"];
    let router = file.topology("shard-high-4", doc(&ids, json!({"type": "id_bits", "layout": "shard_high"})));
    load_case(&mut file, "shard-high-4", &router);
    let mut all = Vec::new();
    for shard in 0..4u32 {
        for (what, local) in [("local-0", 0u64), ("local-1", 1), ("local-max", (1 << 56) - 1)] {
            let id = u64::from(shard) << 56 | local;
            stated(
                &mut file,
                &router,
                "shard-high-4",
                &format!("shard-{shard}-{what}"),
                id,
                shard,
                ids[shard as usize],
            );
            all.push(id);
        }
        let id = u64::from(shard) << 56 | 42;
        let expected: Vec<&str> = (0..3).map(|step| ids[(shard as usize + step) % 4]).collect();
        let what = format!("stated/replicas-3-shard-{shard}");
        stated_replicas(&mut file, "shard-high-4", &router, &what, u64_key(id), &expected);
    }
    let shards: Vec<u64> = all.iter().map(|id| id >> 56).collect();
    assert_eq!(
        router.route_many(all.iter().copied()).expect("route_many"),
        shards.iter().map(|&s| s as u32).collect::<Vec<_>>()
    );
    let keys: Vec<Value> = all.iter().map(|&id| u64_key(id)).collect();
    file.case(
        "shard-high-4/route_many",
        json!({"op": "route_many", "topology": "shard-high-4", "keys": keys, "expect": {"shards": shards}}),
    );
    for (what, key) in [
        ("shard-4", u64_key(4 << 56)),
        ("shard-255", u64_key(u64::MAX)),
        ("text-42", utf8("42")),
        ("text-empty", utf8("")),
        ("bytes", hex(&[0x2a, 0, 0, 0, 0, 0, 0, 0])),
    ] {
        rejected(&mut file, &router, "shard-high-4", what, 0, key);
    }
    let replicas = router.replicas(0u64, 5);
    expect_error(
        &mut file,
        "shard-high-4/rejected/replicas-5",
        json!({"op": "replicas", "topology": "shard-high-4", "key": u64_key(0), "count": 5}),
        "invalid_argument",
        replicas.map(drop),
    );

    // Twitter's layout and epoch (the defaults), 1024 shards over 4 nodes.
    let tw = ["tw0", "tw1", "tw2", "tw3"];
    let table = cycling(&tw, 1024);
    let router = file.topology(
        "twitter-snowflake",
        doc(&tw, json!({"type": "id_bits", "layout": "snowflake", "shards": table})).epoch(2),
    );
    load_case(&mut file, "twitter-snowflake", &router);
    let twitter = reference("twitter-wikipedia");
    let node = tw[twitter.field as usize % 4];
    stated(&mut file, &router, "twitter-snowflake", "wikipedia-example", twitter.id, twitter.field, node);
    // Ids built by hand: (ms since the epoch) << 22 | worker << 12 | sequence.
    for (what, elapsed, worker, sequence) in
        [("epoch-start", 0u64, 0u64, 0u64), ("worker-1023", 1, 1023, 4095), ("last-ms", (1 << 41) - 1, 517, 9)]
    {
        let id = elapsed << 22 | worker << 12 | sequence;
        stated(&mut file, &router, "twitter-snowflake", what, id, worker as u32, tw[worker as usize % 4]);
    }
    rejected(&mut file, &router, "twitter-snowflake", "sign-bit", 0, u64_key(1 << 63 | twitter.id));

    // Discord's layout; its 10-bit worker/process field is a cell of a directory.
    let router = file.topology(
        "discord-cells",
        doc(
            &["d0", "d1"],
            json!({"type": "id_bits", "layout": "snowflake", "timestamp_bits": 42, "epoch_ms": 1_420_070_400_000u64,
                   "shards": ["d0", "d1"], "cells": {"32": 0, "3": 1}}),
        )
        .epoch(3),
    );
    load_case(&mut file, "discord-cells", &router);
    stated(&mut file, &router, "discord-cells", "docs-example", reference("discord-docs").id, 0, "d0");
    stated(&mut file, &router, "discord-cells", "npm-example", reference("discord-snowflake-npm").id, 1, "d1");
    let fine = reference("discord-docs").id;
    rejected(&mut file, &router, "discord-cells", "unknown-cell-1", fine, u64_key(1 << 12));

    // Pinterest's layout: 2 reserved bits, 16 bits of shard, 46 bits of type and local id.
    let router = file.topology(
        "pinterest-cells",
        doc(
            &["db-1", "db-2"],
            json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 16, "shard_shift": 46,
                   "shards": ["db-1", "db-2"], "cells": {"0": 0, "3429": 1}}),
        )
        .epoch(4),
    );
    load_case(&mut file, "pinterest-cells", &router);
    let pinterest = reference("pinterest-blog");
    stated(&mut file, &router, "pinterest-cells", "blog-example", pinterest.id, 1, "db-2");
    stated(&mut file, &router, "pinterest-cells", "cell-0", 12345, 0, "db-1");
    rejected(&mut file, &router, "pinterest-cells", "reserved-bit", 0, u64_key(1 << 62 | pinterest.id));
    rejected(&mut file, &router, "pinterest-cells", "unknown-cell", 0, u64_key(3430 << 46));

    // Ticket servers: MySQL's series route to the server (offset - 1) that made them.
    let router = file.topology(
        "flickr-tickets",
        doc(&["odd", "even"], json!({"type": "id_bits", "layout": "ticket", "servers": 2})).epoch(5),
    );
    load_case(&mut file, "flickr-tickets", &router);
    let ten = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"];
    let mysql = file.topology(
        "mysql-tickets-10",
        doc(&ten, json!({"type": "id_bits", "layout": "ticket", "servers": 10})).epoch(6),
    );
    load_case(&mut file, "mysql-tickets-10", &mysql);
    for (label, offset, increment, _, series) in mysql_series() {
        let (topology, router, names): (&str, &Router, &[&str]) = if increment == 2 {
            ("flickr-tickets", &router, &["odd", "even"])
        } else {
            ("mysql-tickets-10", &mysql, &ten)
        };
        for id in series {
            let shard = offset - 1;
            stated(&mut file, router, topology, &format!("{label}-{id}"), id, shard, names[shard as usize]);
        }
    }
    rejected(&mut file, &router, "flickr-tickets", "zero", 1, u64_key(0));
    rejected(&mut file, &router, "flickr-tickets", "text-1", 1, utf8("1"));

    document_errors(&mut file);
    call_cases(&mut file);
    ticket_server_cases(&mut file);
    ulid_cases(&mut file);
    file
}

/// One row of `reference/ticket-servers.txt`: `(label, servers, turn, down, answer)`, the
/// answer `Some((server, next_turn))` or `None` for unavailable.
type TicketRow = (String, u32, u64, Vec<u32>, Option<(u32, u64)>);

/// The rows of `reference/ticket-servers.txt`.
fn ticket_server_rows() -> Vec<TicketRow> {
    reference_lines("ticket-servers.txt")
        .iter()
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(columns.len(), 6, "ticket-servers.txt: {line}");
            let down = if columns[3] == "-" {
                Vec::new()
            } else {
                columns[3].split(',').map(|s| s.parse().expect("down")).collect()
            };
            let answer = (columns[4] != "unavailable")
                .then(|| (columns[4].parse().expect("server"), columns[5].parse().expect("next turn")));
            (
                columns[0].to_string(),
                columns[1].parse().expect("servers"),
                columns[2].parse().expect("turn"),
                down,
                answer,
            )
        })
        .collect()
}

/// `id_bits_ticket_server`: the reference rows on the two-server and ten-server
/// topologies, a directory of cells, and refused operations.
fn ticket_server_cases(file: &mut VectorFile) {
    for (label, servers, turn, down, answer) in ticket_server_rows() {
        let topology = if servers == 2 { "flickr-tickets" } else { "mysql-tickets-10" };
        let operation = json!({"op": "id_bits_ticket_server", "turn": turn, "down": down});
        let name = format!("{topology}/apply/ticket-server-{label}");
        match answer {
            Some((server, next_turn)) => {
                let result = applied(file, &name, On::Topology(topology), operation);
                // Servers `0..n` passed over from `turn % n` up to the answer are the down ones.
                let n = u64::from(servers);
                let skipped: Vec<u32> =
                    (0..n).map(|step| ((turn + step) % n) as u32).take_while(|&s| s != server).collect();
                assert!(skipped.iter().all(|s| down.contains(s)), "{label}: a live server was skipped");
                let expected = json!({"shard": server, "next_turn": next_turn, "skipped": skipped,
                    "topology": file.parsed(topology).to_value()});
                assert_eq!(result, expected, "{label}: core disagrees");
            }
            None => apply_refused(file, &name, On::Topology(topology), operation, "unavailable"),
        }
    }
    // Rotation over the ten servers: the turn each call returns, passed to the next.
    let mut turn = 8u64;
    for call in 0..3 {
        let operation = json!({"op": "id_bits_ticket_server", "turn": turn});
        let result = applied(
            file,
            &format!("mysql-tickets-10/apply/ticket-server-rotation-{call}"),
            On::Topology("mysql-tickets-10"),
            operation,
        );
        assert_eq!(result["shard"], json!((8 + call) % 10));
        turn = result["next_turn"].as_u64().expect("next turn");
    }
    // A directory of cells: the servers ids route to are the cells 0, 1 and 3 (server 2's
    // ids would route nowhere, so it is never picked).
    let router = file.topology(
        "ticket-cells",
        doc(&["t0", "t1"], json!({"type": "id_bits", "layout": "ticket", "servers": 4, "shards": ["t0", "t1"], "cells": {"0": 0, "1": 1, "3": 0}}))
            .epoch(7),
    );
    load_case(file, "ticket-cells", &router);
    for (what, turn, down, cell, next_turn, skipped) in [
        ("turn-2", 2u64, json!([]), 3u32, 0u64, json!([])),
        ("cell-3-down", 2, json!([3]), 0, 1, json!([3])),
        ("cells-0-3-down", 2, json!([0, 3]), 1, 2, json!([3, 0])),
    ] {
        let operation = json!({"op": "id_bits_ticket_server", "turn": turn, "down": down});
        let result =
            applied(file, &format!("ticket-cells/apply/ticket-server-{what}"), On::Topology("ticket-cells"), operation);
        let expected = json!({"cell": cell, "next_turn": next_turn, "skipped": skipped, "topology": file.parsed("ticket-cells").to_value()});
        assert_eq!(result, expected, "ticket-cells/{what}: core disagrees");
    }
    let refused: Vec<(&str, &str, Value, &str)> = vec![
        (
            "ticket-cells",
            "all-down",
            json!({"op": "id_bits_ticket_server", "turn": 0, "down": [0, 1, 3]}),
            "unavailable",
        ),
        (
            "ticket-cells",
            "down-not-a-cell",
            json!({"op": "id_bits_ticket_server", "turn": 0, "down": [2]}),
            "invalid_argument",
        ),
        (
            "flickr-tickets",
            "down-server-2",
            json!({"op": "id_bits_ticket_server", "turn": 0, "down": [2]}),
            "invalid_argument",
        ),
        (
            "flickr-tickets",
            "down-not-a-list",
            json!({"op": "id_bits_ticket_server", "turn": 0, "down": 1}),
            "invalid_argument",
        ),
        ("flickr-tickets", "turn-missing", json!({"op": "id_bits_ticket_server"}), "invalid_argument"),
        ("flickr-tickets", "turn-negative", json!({"op": "id_bits_ticket_server", "turn": -1}), "invalid_argument"),
        (
            "twitter-snowflake",
            "needs-ticket-layout",
            json!({"op": "id_bits_ticket_server", "turn": 0}),
            "invalid_argument",
        ),
    ];
    for (topology, what, operation, code) in refused {
        apply_refused(
            file,
            &format!("{topology}/apply/refused-ticket-server-{what}"),
            On::Topology(topology),
            operation,
            code,
        );
    }
    // A `down` list past limits::MAX_TICKET_DOWN (65,535 entries) is `limit_exceeded`:
    // covered by the core's unit tests, not here (the case would weigh 200 KB).
}

/// The ULID alphabet, for decoding by hand below (index = value).
const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A ULID's 128 bits read plainly: each character's index in the alphabet, 5 bits each.
fn ulid_value(text: &str) -> u128 {
    text.chars()
        .fold(0u128, |value, c| value * 32 + CROCKFORD.find(c.to_ascii_uppercase()).expect("ULID character") as u128)
}

/// `(label, text)` of `reference/ulid-spec.txt`.
fn published_ulids() -> Vec<(String, String)> {
    reference_lines("ulid-spec.txt")
        .iter()
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(columns.len(), 2, "ulid-spec.txt: {line}");
            (columns[0].to_string(), columns[1].to_string())
        })
        .collect()
}

/// The `ulid` layout: published ULIDs routed, decoded and rebuilt; a directory of cells
/// and a partition key; rejected keys, documents and operations.
fn ulid_cases(file: &mut VectorFile) {
    // 8 shard bits: 256 shards, cycling over four nodes.
    let nodes = ["u0", "u1", "u2", "u3"];
    let router = file.topology(
        "ulid-256",
        doc(&nodes, json!({"type": "id_bits", "layout": "ulid", "shard_bits": 8, "shards": cycling(&nodes, 256)}))
            .epoch(8),
    );
    load_case(file, "ulid-256", &router);
    let published = published_ulids();
    let text_of =
        |label: &str| published.iter().find(|(l, _)| l == label).map(|(_, t)| t.clone()).expect("published ULID");
    // What the spec states: the monotonic ULIDs share a millisecond and count up by one;
    // the largest has timestamp 2^48 - 1.
    for run in [
        ["monotonic-a", "monotonic-b", "monotonic-c", "monotonic-d"],
        ["monotonic-x", "monotonic-y", "monotonic-z", "monotonic-z"],
    ] {
        for pair in run.windows(2).filter(|pair| pair[0] != pair[1]) {
            let (before, after) = (ulid_value(&text_of(pair[0])), ulid_value(&text_of(pair[1])));
            assert_eq!(before >> 80, after >> 80, "{pair:?}: one millisecond");
            assert_eq!(before + 1, after, "{pair:?}: randomness + 1");
        }
    }
    assert_eq!(ulid_value(&text_of("largest")) >> 80, 281_474_976_710_655);
    assert_eq!(&text_of("spec-layout")[..10], "01AN4Z07BY");
    let mut keys = Vec::new();
    let mut shards = Vec::new();
    for (label, text) in &published {
        // Read by hand: the shard is the top 8 of the 80 random bits.
        let value = ulid_value(text);
        let shard = (value >> 72 & 0xff) as u32;
        let node = nodes[shard as usize % 4];
        stated_route(file, "ulid-256", &router, &format!("published/{label}"), utf8(text), (shard, node));
        keys.push(utf8(text));
        shards.push(shard);
        let fields =
            json!([["timestamp_ms", (value >> 80).to_string()], ["randomness", (value & ((1 << 72) - 1)).to_string()]]);
        let result = applied(
            file,
            &format!("ulid-256/apply/decode-{label}"),
            On::Topology("ulid-256"),
            json!({"op": "id_bits_decode", "id": text}),
        );
        assert_eq!(result["shard"], json!(shard), "{label}: core disagrees with the shard");
        assert_eq!(result["fields"], fields, "{label}: core disagrees with the fields");
        // Built back from its fields.
        let operation = json!({"op": "id_bits_compose", "timestamp_ms": (value >> 80).to_string(), "shard": shard,
            "randomness": (value & ((1 << 72) - 1)).to_string()});
        let result = applied(file, &format!("ulid-256/apply/compose-{label}"), On::Topology("ulid-256"), operation);
        assert_eq!(result["id"], json!(text), "{label}: core disagrees with the text");
    }
    file.case(
        "ulid-256/route_many/published",
        json!({"op": "route_many", "topology": "ulid-256", "keys": keys, "expect": {"shards": shards}}),
    );
    // Case-insensitive: the lower-case text routes and decodes alike.
    let intro = text_of("spec-intro");
    let value = ulid_value(&intro);
    let shard = (value >> 72 & 0xff) as u32;
    stated_route(
        file,
        "ulid-256",
        &router,
        "lower-case/spec-intro",
        utf8(&intro.to_ascii_lowercase()),
        (shard, nodes[shard as usize % 4]),
    );
    let mixed: String =
        intro.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_lowercase() } else { c }).collect();
    stated_route(file, "ulid-256", &router, "mixed-case/spec-intro", utf8(&mixed), (shard, nodes[shard as usize % 4]));
    // Replicas: the next nodes in list order after the owner.
    let owner = shard as usize % 4;
    let expected: Vec<&str> = (0..3).map(|step| nodes[(owner + step) % 4]).collect();
    stated_replicas(file, "ulid-256", &router, "stated/replicas-3-spec-intro", utf8(&intro), &expected);

    // Rejected keys.
    let fine = utf8(&intro);
    let refusals: Vec<(&str, Value)> = vec![
        ("integer", u64_key(42)),
        ("empty", utf8("")),
        ("25-characters", utf8(&intro[..25])),
        ("27-characters", utf8(&format!("{intro}0"))),
        ("overflow-8", utf8("80000000000000000000000000")),
        ("overflow-z", utf8("ZZZZZZZZZZZZZZZZZZZZZZZZZZ")),
        ("letter-i", utf8("01ARZ3NDEKTSV4RRFFQ69G5FAI")),
        ("letter-l", utf8("01ARZ3NDEKTSV4RRFFQ69G5FAL")),
        ("letter-o", utf8("01ARZ3NDEKTSV4RRFFQ69G5FAO")),
        ("letter-u", utf8("01ARZ3NDEKTSV4RRFFQ69G5FAU")),
        ("lower-u", utf8("01arz3ndektsv4rrffq69g5fau")),
        ("hyphen", utf8("01ARZ3NDEK-TSV4RRFFQ69G5FA")),
        (
            "uuid-bytes",
            hex(&[0x01, 0x56, 0x3d, 0xf3, 0x6a, 0x4d, 0x7d, 0x44, 0xe1, 0xe7, 0x3c, 0xd4, 0x50, 0x2b, 0x71, 0x5b]),
        ),
        ("non-ascii", hex(&[0xc3; 26])),
    ];
    for (what, key) in refusals {
        let outcome = router.route(owned_key(&key).as_key()).map(drop);
        refused_key(file, "ulid-256", &key, Some(fine.clone()), outcome, |op| format!("ulid-256/rejected/{op}-{what}"));
    }
    let outcome = router.decode_id(42).map(drop);
    expect_error(
        file,
        "ulid-256/decode_id/rejected-integer",
        json!({"op": "decode_id", "topology": "ulid-256", "id": "42"}),
        "invalid_key",
        outcome,
    );

    // Ranges of ULIDs sort by time first: every shard.
    let (start, end) = (text_of("monotonic-a"), text_of("monotonic-z"));
    let got = router.shards_for_range(start.as_str(), Some(end.as_str().into())).expect("range");
    assert_eq!(got, (0..256).collect::<Vec<u32>>());
    file.case(
        "ulid-256/shards_for_range/every-shard",
        json!({"op": "shards_for_range", "topology": "ulid-256", "start": utf8(&start), "end": utf8(&end), "expect": {"shards": got}}),
    );
    for (what, start, end, code) in [
        ("reversed", utf8(&end), utf8(&start), "invalid_argument"),
        ("not-a-ulid", utf8("user:1"), Value::Null, "invalid_key"),
        ("integer-end", utf8(&start), u64_key(7), "invalid_key"),
    ] {
        let owned_start = owned_key(&start);
        let owned_end = (!end.is_null()).then(|| owned_key(&end));
        let outcome = router
            .shards_for_range(owned_start.as_key(), owned_end.as_ref().map(shardroute::OwnedKey::as_key))
            .map(drop);
        expect_error(
            file,
            &format!("ulid-256/shards_for_range/{what}"),
            json!({"op": "shards_for_range", "topology": "ulid-256", "start": start, "end": end}),
            code,
            outcome,
        );
    }

    // 16 shard bits with a directory of cells, and a partition key: keys are
    // `<ULID>/<rest>`, routed by the ULID before the first `/`.
    let router = file.topology(
        "ulid-cells",
        doc(&["c0", "c1"], json!({"type": "id_bits", "layout": "ulid", "shard_bits": 16, "shards": ["c0", "c1"], "cells": {"7": 0, "4242": 1}}))
            .hashing(json!({"partition_key": {"rule": "prefix", "separator": "/"}}))
            .epoch(9),
    );
    load_case(file, "ulid-cells", &router);
    let timestamp_ms = 1_700_000_000_000u64;
    let randomness = 0x00ab_cdef_0123_4567u128;
    let built: u128 = u128::from(timestamp_ms) << 80 | 4242u128 << 64 | randomness;
    let operation = json!({"op": "id_bits_compose", "timestamp_ms": timestamp_ms, "cell": 4242, "randomness": randomness.to_string()});
    let result = applied(file, "ulid-cells/apply/compose-cell-4242", On::Topology("ulid-cells"), operation);
    let text = result["id"].as_str().expect("id").to_string();
    assert_eq!(ulid_value(&text), built, "compose: core disagrees with the bits");
    stated_route(file, "ulid-cells", &router, "stated/cell-4242", utf8(&text), (1, "c1"));
    stated_route(
        file,
        "ulid-cells",
        &router,
        "stated/cell-4242-partition-key",
        utf8(&format!("{text}/comments/7")),
        (1, "c1"),
    );
    let result = applied(
        file,
        "ulid-cells/apply/decode-cell-4242",
        On::Topology("ulid-cells"),
        json!({"op": "id_bits_decode", "id": text}),
    );
    let expected = json!({"shard": 1, "fields": [["timestamp_ms", timestamp_ms.to_string()], ["cell", "4242"], ["randomness", randomness.to_string()]]});
    assert_eq!(result["shard"], expected["shard"]);
    assert_eq!(result["fields"], expected["fields"]);
    let unknown = ulid_to_text_plain(u128::from(timestamp_ms) << 80 | 4243u128 << 64);
    let outcome = router.route(unknown.as_str()).map(drop);
    refused_key(file, "ulid-cells", &utf8(&unknown), None, outcome, |op| {
        format!("ulid-cells/rejected/{op}-unknown-cell")
    });

    // Refused operations.
    let refused: Vec<(&str, &str, Value, &str)> = vec![
        (
            "ulid-256",
            "randomness-too-wide",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "randomness": (1u128 << 72).to_string()}),
            "invalid_argument",
        ),
        (
            "ulid-256",
            "randomness-hex",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "randomness": "ff"}),
            "invalid_argument",
        ),
        (
            "ulid-256",
            "randomness-missing",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0}),
            "invalid_argument",
        ),
        (
            "ulid-256",
            "timestamp-past-48-bits",
            json!({"op": "id_bits_compose", "timestamp_ms": 1u64 << 48, "shard": 0, "randomness": 0}),
            "invalid_argument",
        ),
        (
            "ulid-256",
            "sequence-is-not-ulid",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "sequence": 0}),
            "invalid_argument",
        ),
        ("ulid-256", "decode-integer", json!({"op": "id_bits_decode", "id": 42}), "invalid_argument"),
        (
            "ulid-cells",
            "unknown-cell",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "cell": 8, "randomness": 0}),
            "invalid_argument",
        ),
        (
            "ulid-256",
            "tickets-need-ticket-layout",
            json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 1}),
            "invalid_argument",
        ),
    ];
    for (topology, what, operation, code) in refused {
        apply_refused(file, &format!("{topology}/apply/refused-{what}"), On::Topology(topology), operation, code);
    }
    for (what, id) in [
        ("overflow", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
        ("letter-o", "01ARZ3NDEKTSV4RRFFQ69G5FAO"),
        ("short", "01ARZ3NDEK"),
    ] {
        let operation = json!({"op": "id_bits_decode", "id": id});
        apply_refused(
            file,
            &format!("ulid-256/apply/refused-decode-{what}"),
            On::Topology("ulid-256"),
            operation,
            "invalid_key",
        );
    }
    // decode of an integer layout through the operation agrees with decode_id.
    let result = applied(
        file,
        "flickr-tickets/apply/decode-id-8",
        On::Topology("flickr-tickets"),
        json!({"op": "id_bits_decode", "id": "8"}),
    );
    assert_eq!(result["fields"], json!([["sequence", "3"]]));

    // Refused documents.
    let mut bad = Refusals::of(doc(&["a", "b"], json!({"type": "id_bits", "layout": "ulid"})));
    bad.strategy(
        "ulid-shard-bits-zero",
        "invalid_topology",
        json!({"type": "id_bits", "layout": "ulid", "shard_bits": 0}),
    );
    bad.strategy(
        "ulid-shard-bits-33",
        "invalid_topology",
        json!({"type": "id_bits", "layout": "ulid", "shard_bits": 33}),
    );
    bad.strategy(
        "ulid-foreign-field",
        "invalid_topology",
        json!({"type": "id_bits", "layout": "ulid", "timestamp_bits": 48}),
    );
    bad.strategy(
        "ulid-shards-past-capacity",
        "invalid_topology",
        json!({"type": "id_bits", "layout": "ulid", "shard_bits": 1, "shards": ["a", "b", "a"]}),
    );
    bad.edit("ulid-u64-keys", "invalid_topology", |d| d["hashing"] = json!({"keys": "u64"}));
    bad.write(file, "load/");
}

/// 128 bits as ULID text, written plainly.
fn ulid_to_text_plain(value: u128) -> String {
    (0..26).rev().map(|i| CROCKFORD.as_bytes()[(value >> (5 * i) & 31) as usize] as char).collect()
}

fn document_errors(file: &mut VectorFile) {
    let invalid: Vec<(&str, Value)> = vec![
        ("layout-missing", json!({"type": "id_bits"})),
        ("layout-unknown", json!({"type": "id_bits", "layout": "uuid"})),
        ("foreign-field", json!({"type": "id_bits", "layout": "shard_high", "epoch_ms": 0})),
        ("shard-bits-zero", json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 0})),
        ("shard-bits-33", json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 33})),
        ("shard-shift-past-63", json!({"type": "id_bits", "layout": "shard_high", "shard_shift": 57})),
        ("snowflake-65-bits", json!({"type": "id_bits", "layout": "snowflake", "sequence_bits": 14})),
        ("epoch-overflows", json!({"type": "id_bits", "layout": "snowflake", "epoch_ms": "18446744073709551615"})),
        ("epoch-negative", json!({"type": "id_bits", "layout": "snowflake", "epoch_ms": -1})),
        ("servers-missing", json!({"type": "id_bits", "layout": "ticket"})),
        ("servers-65536", json!({"type": "id_bits", "layout": "ticket", "servers": 65536})),
        ("default-table-too-long", json!({"type": "id_bits", "layout": "ticket", "servers": 2})),
        ("shards-empty", json!({"type": "id_bits", "layout": "shard_high", "shards": []})),
        ("shards-unknown-node", json!({"type": "id_bits", "layout": "shard_high", "shards": ["a", "z"]})),
        (
            "shards-past-capacity",
            json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 1, "shards": ["a", "b", "c"]}),
        ),
        ("cells-empty", json!({"type": "id_bits", "layout": "shard_high", "cells": {}})),
        ("cells-leading-zero", json!({"type": "id_bits", "layout": "shard_high", "cells": {"01": 0}})),
        ("cells-past-capacity", json!({"type": "id_bits", "layout": "shard_high", "cells": {"256": 0}})),
        ("cells-unknown-shard", json!({"type": "id_bits", "layout": "shard_high", "cells": {"1": 3}})),
        ("cells-array", json!({"type": "id_bits", "layout": "shard_high", "cells": [0]})),
    ];
    let mut bad = Refusals::of(doc(&["a", "b", "c"], json!({"type": "id_bits", "layout": "shard_high"})));
    for (what, strategy) in invalid {
        bad.strategy(what, "invalid_topology", strategy);
    }
    bad.edit("node-weight", "invalid_topology", |d| d["nodes"] = json!([{"id": "a"}, {"id": "b", "weight": 2}]));
    bad.write(file, "load/");
}

/// `decode_id`, `shards_for_range` and `apply` cases.
fn call_cases(file: &mut VectorFile) {
    let routers: Vec<(&str, Router)> =
        ["shard-high-4", "twitter-snowflake", "discord-cells", "pinterest-cells", "flickr-tickets", "mysql-tickets-10"]
            .into_iter()
            .map(|id| (id, file.router(id)))
            .collect();
    let router = |id: &str| &routers.iter().find(|(name, _)| *name == id).expect("topology").1;

    // Published ids decode to the fields their sources give.
    let decodes: Vec<(&str, &str, Value)> = {
        let twitter = reference("twitter-wikipedia");
        let docs = reference("discord-docs");
        let npm = reference("discord-snowflake-npm");
        let pinterest = reference("pinterest-blog");
        let time = |p: &Published| p.timestamp_ms.expect("timestamp").to_string();
        vec![
            (
                "twitter-snowflake",
                "wikipedia-example",
                json!({"id": twitter.id.to_string(), "expect": {"shard": twitter.field,
                "fields": [["timestamp_ms", time(&twitter)], ["sequence", twitter.low.to_string()]]}}),
            ),
            (
                "discord-cells",
                "docs-example",
                json!({"id": docs.id.to_string(), "expect": {"shard": 0,
                "fields": [["timestamp_ms", time(&docs)], ["cell", docs.field.to_string()], ["sequence", docs.low.to_string()]]}}),
            ),
            (
                "discord-cells",
                "npm-example",
                json!({"id": npm.id.to_string(), "expect": {"shard": 1,
                "fields": [["timestamp_ms", time(&npm)], ["cell", npm.field.to_string()], ["sequence", npm.low.to_string()]]}}),
            ),
            (
                "pinterest-cells",
                "blog-example",
                json!({"id": pinterest.id.to_string(), "expect": {"shard": 1,
                "fields": [["cell", pinterest.field.to_string()], ["local", pinterest.low.to_string()]]}}),
            ),
            // Hand-read: shard 3 in the top byte, local 42.
            (
                "shard-high-4",
                "shard-3-local-42",
                json!({"id": (3u64 << 56 | 42).to_string(), "expect": {"shard": 3, "fields": [["local", "42"]]}}),
            ),
            // Ticket ids: 35 is the 3rd (from 0) id of server offset 5 of 10: 5 + 3 * 10.
            ("mysql-tickets-10", "id-35", json!({"id": "35", "expect": {"shard": 4, "fields": [["sequence", "3"]]}})),
            ("flickr-tickets", "id-8", json!({"id": "8", "expect": {"shard": 1, "fields": [["sequence", "3"]]}})),
        ]
    };
    for (topology, what, mut case) in decodes {
        let id: u64 = case["id"].as_str().expect("id").parse().expect("id");
        let decoded = router(topology).decode_id(id).expect("decode");
        let fields: Vec<Value> = decoded.fields.iter().map(|(name, value)| json!([name, value.to_string()])).collect();
        assert_eq!(
            json!({"shard": decoded.shard, "fields": fields}),
            case["expect"],
            "{topology}/{what}: core disagrees"
        );
        case["op"] = json!("decode_id");
        case["topology"] = json!(topology);
        file.case(&format!("{topology}/decode_id/{what}"), case);
    }
    for (topology, what, id) in [
        ("twitter-snowflake", "sign-bit", 1u64 << 63),
        ("shard-high-4", "shard-9", 9 << 56),
        ("discord-cells", "unknown-cell", 1 << 12),
        ("flickr-tickets", "zero", 0),
    ] {
        let outcome = router(topology).decode_id(id).map(drop);
        expect_error(
            file,
            &format!("{topology}/decode_id/rejected-{what}"),
            json!({"op": "decode_id", "topology": topology, "id": id.to_string()}),
            "invalid_key",
            outcome,
        );
    }

    // shard_high: a range of ids is a range of shards (stated by hand).
    for (what, start, end, shards) in [
        ("within-shard-0", 0u64, Some(1u64 << 56), vec![0u32]),
        ("across-0-to-2", (1 << 56) - 1, Some(3 << 56), vec![0, 1, 2]),
        ("shard-2-to-end", 2 << 56, None, vec![2, 3]),
        ("beyond-the-table", 5 << 56, None, vec![]),
    ] {
        let got = router("shard-high-4").shards_for_range(start, end.map(shardroute::Key::U64)).expect("range");
        assert_eq!(got, shards, "shard-high-4/{what}");
        let end = end.map_or(Value::Null, u64_key);
        file.case(
            &format!("shard-high-4/shards_for_range/{what}"),
            json!({"op": "shards_for_range", "topology": "shard-high-4", "start": u64_key(start), "end": end, "expect": {"shards": shards}}),
        );
    }
    let cells = router("discord-cells").shards_for_range(0u64, None).expect("range");
    assert_eq!(cells, [0, 1]);
    file.case(
        "discord-cells/shards_for_range/everything",
        json!({"op": "shards_for_range", "topology": "discord-cells", "start": u64_key(0), "end": null, "expect": {"shards": cells}}),
    );
    for (what, start, end, code) in [
        ("text-start", utf8("a"), Value::Null, "invalid_key"),
        ("empty-range", u64_key(5), u64_key(5), "invalid_argument"),
    ] {
        let owned_start = owned_key(&start);
        let owned_end = (!end.is_null()).then(|| owned_key(&end));
        let outcome = router("shard-high-4")
            .shards_for_range(owned_start.as_key(), owned_end.as_ref().map(shardroute::OwnedKey::as_key))
            .map(drop);
        expect_error(
            file,
            &format!("shard-high-4/shards_for_range/{what}"),
            json!({"op": "shards_for_range", "topology": "shard-high-4", "start": start, "end": end}),
            code,
            outcome,
        );
    }

    // Generators through apply: published ids rebuilt from their fields, MySQL's series.
    let twitter = reference("twitter-wikipedia");
    let docs = reference("discord-docs");
    let pinterest = reference("pinterest-blog");
    let mut generated: Vec<(&str, String, Value, Value)> = vec![
        (
            "twitter-snowflake",
            "compose-wikipedia-example".into(),
            json!({"op": "id_bits_compose", "timestamp_ms": twitter.timestamp_ms.expect("ms").to_string(), "shard": twitter.field, "sequence": twitter.low}),
            json!({"id": twitter.id.to_string()}),
        ),
        (
            "discord-cells",
            "compose-docs-example".into(),
            json!({"op": "id_bits_compose", "timestamp_ms": docs.timestamp_ms.expect("ms"), "cell": docs.field, "sequence": docs.low}),
            json!({"id": docs.id.to_string()}),
        ),
        (
            "pinterest-cells",
            "compose-blog-example".into(),
            json!({"op": "id_bits_compose", "cell": pinterest.field, "local": pinterest.low}),
            json!({"id": pinterest.id.to_string()}),
        ),
        (
            "flickr-tickets",
            "compose-even-4th".into(),
            json!({"op": "id_bits_compose", "shard": 1, "sequence": 3}),
            json!({"id": "8"}),
        ),
    ];
    for (label, offset, increment, counter, series) in mysql_series() {
        let topology = if increment == 2 { "flickr-tickets" } else { "mysql-tickets-10" };
        let next = series.last().expect("ids") + 1;
        let ids: Vec<String> = series.iter().map(u64::to_string).collect();
        generated.push((
            topology,
            format!("tickets-{label}"),
            json!({"op": "id_bits_tickets", "shard": offset - 1, "auto_increment": counter, "count": series.len()}),
            json!({"ids": ids, "auto_increment": next.to_string()}),
        ));
        generated.push((topology, format!("reserve-block-{label}"),
            json!({"op": "id_bits_reserve_block", "shard": offset - 1, "auto_increment": counter.to_string(), "block_size": series.len()}),
            json!({"first": ids[0], "last": ids[ids.len() - 1], "step": increment, "count": series.len(), "auto_increment": next.to_string()})));
    }
    for (topology, what, operation, report) in generated {
        let result = applied(file, &format!("{topology}/apply/{what}"), On::Topology(topology), operation);
        let mut expected = report;
        // Generators return the topology unchanged (same epoch).
        expected["topology"] = file.parsed(topology).to_value();
        assert_eq!(result, expected, "{topology}/{what}: core disagrees");
    }
    let refused: Vec<(&str, &str, Value)> = vec![
        (
            "twitter-snowflake",
            "before-epoch",
            json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "sequence": 0}),
        ),
        (
            "twitter-snowflake",
            "sequence-4096",
            json!({"op": "id_bits_compose", "timestamp_ms": 1_288_834_974_657u64, "shard": 0, "sequence": 4096}),
        ),
        ("shard-high-4", "shard-without-node", json!({"op": "id_bits_compose", "shard": 4, "local": 0})),
        ("shard-high-4", "local-too-wide", json!({"op": "id_bits_compose", "shard": 0, "local": "72057594037927936"})),
        (
            "discord-cells",
            "unknown-cell",
            json!({"op": "id_bits_compose", "timestamp_ms": 1_420_070_400_000u64, "cell": 1, "sequence": 0}),
        ),
        (
            "discord-cells",
            "shard-instead-of-cell",
            json!({"op": "id_bits_compose", "timestamp_ms": 1_420_070_400_000u64, "shard": 0, "sequence": 0}),
        ),
        (
            "shard-high-4",
            "tickets-need-ticket-layout",
            json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 1}),
        ),
        ("flickr-tickets", "count-zero", json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 0})),
        ("flickr-tickets", "server-2", json!({"op": "id_bits_tickets", "shard": 2, "auto_increment": 1, "count": 1})),
        (
            "flickr-tickets",
            "exhausted",
            json!({"op": "id_bits_reserve_block", "shard": 0, "auto_increment": "18446744073709551615", "block_size": 1}),
        ),
    ];
    for (topology, what, operation) in refused {
        let name = format!("{topology}/apply/refused-{what}");
        apply_refused(file, &name, On::Topology(topology), operation, "invalid_argument");
    }
    let operation = json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 65537});
    let name = "flickr-tickets/apply/refused-batch-over-limit";
    apply_refused(file, name, On::Topology("flickr-tickets"), operation, "limit_exceeded");
}
