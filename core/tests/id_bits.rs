//! `id_bits`: ids that carry their shard. Round trips of the generators, routing
//! against the bit arithmetic written plainly (u128, no masks), ticket servers against
//! a brute-force MySQL model, and the document rules.

mod common;

use common::{answers_any_id, doc, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::ids::id_bits::{ShardHigh, Snowflake, Tickets};
use shardroute::strategy::ids::tickets::{next_ticket, reserve_block, ticket_ids};
use shardroute::{ops, Key, Router, Topology};

/// The documents of this file: epoch 7.
fn ids_doc(nodes: &[&str], strategy: Value) -> Doc {
    doc(nodes).strategy(strategy).epoch(7)
}

fn router(nodes: &[&str], strategy: Value) -> Router {
    ids_doc(nodes, strategy).router()
}

fn load_error(nodes: &[&str], strategy: Value) -> (String, String) {
    let err = ids_doc(nodes, strategy).load().unwrap_err();
    (err.code().to_string(), err.message().to_string())
}

/// `floor(id / 2^shift) mod 2^bits`, and whether any bit at or above `shift + bits` is set,
/// by u128 division: the bit layout written as arithmetic.
fn field(id: u64, shift: u32, bits: u32) -> (u64, bool) {
    let id = u128::from(id);
    let field = (id >> shift) % (1u128 << bits);
    (field as u64, id >> (shift + bits) != 0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn shard_high_round_trips(bits in 1u32..=32, shift_seed in any::<u32>(), shard_seed in any::<u32>(), local_seed in any::<u64>()) {
        let shift = shift_seed % (64 - bits + 1);
        let layout = ShardHigh::new(bits, shift).unwrap();
        let shard = (u64::from(shard_seed) % (1u64 << bits)) as u32;
        let local = local_seed % (1u64 << shift); // shift <= 63: shard_bits >= 1
        let id = layout.compose(shard, local).unwrap();
        prop_assert_eq!(layout.decode(id).unwrap(), (shard, local));
        prop_assert_eq!(u128::from(id), u128::from(shard) * (1u128 << shift) + u128::from(local));
    }

    #[test]
    fn snowflake_round_trips(t_bits in 1u32..=52, s_bits in 1u32..=12, seed in any::<(u64, u32, u64, u64)>()) {
        let q_bits = (seed.0 % 13) as u32;
        prop_assume!(t_bits + s_bits + q_bits <= 64);
        let epoch = seed.3 % (1 << 42);
        let layout = Snowflake::new(t_bits, s_bits, q_bits, epoch).unwrap();
        let elapsed = seed.2 % (1u64 << t_bits);
        let shard = (u64::from(seed.1) % (1 << s_bits)) as u32;
        let sequence = seed.0 % (1u64 << q_bits);
        let id = layout.compose(epoch + elapsed, shard, sequence).unwrap();
        let parts = layout.decode(id).unwrap();
        prop_assert_eq!((parts.timestamp_ms, parts.shard, parts.sequence), (epoch + elapsed, shard, sequence));
        // Timestamps order ids: a later millisecond always makes a larger id.
        if elapsed + 1 < (1u64 << t_bits) {
            prop_assert!(layout.compose(epoch + elapsed + 1, 0, 0).unwrap() > id);
        }
    }

    #[test]
    fn ticket_layout_round_trips(servers in 1u32..=65535, shard_seed in any::<u32>(), sequence in 0u64..(1 << 40)) {
        let layout = Tickets::new(servers).unwrap();
        let shard = shard_seed % servers;
        let id = layout.compose(shard, sequence).unwrap();
        prop_assert_eq!(layout.decode(id).unwrap(), (shard, sequence));
        // The id is what the server with offset shard + 1 hands out as its sequence-th.
        prop_assert_eq!(ticket_ids(shard + 1, servers, 1, 1).unwrap().ids[0] + sequence * u64::from(servers), id);
    }

    #[test]
    fn shard_high_routing_is_the_bit_arithmetic(bits in 1u32..=10, shift_seed in any::<u32>(), shards in 1usize..=6, id in any::<u64>(), low in any::<bool>()) {
        let shift = shift_seed % (64 - bits + 1);
        // Half the time, ids small enough that the reserved bits are clear.
        let id = if low && shift + bits < 64 { id % (1u64 << (shift + bits)) } else { id };
        let nodes = ["a", "b", "c"];
        let table: Vec<&str> = (0..shards.min(1 << bits)).map(|s| nodes[s % 3]).collect();
        let router = router(&nodes, json!({"type": "id_bits", "layout": "shard_high", "shard_bits": bits, "shard_shift": shift, "shards": table}));
        let (expected, reserved) = field(id, shift, bits);
        match router.route(id) {
            Ok(shard) => {
                prop_assert!(!reserved && expected < table.len() as u64);
                prop_assert_eq!(u64::from(shard), expected);
                prop_assert_eq!(router.node(id).unwrap(), table[shard as usize]);
                let decoded = router.decode_id(id).unwrap();
                prop_assert_eq!(decoded.shard, shard);
                prop_assert_eq!(decoded.fields, vec![("local", id % (1u64 << shift))]);
            }
            Err(err) => {
                prop_assert_eq!(err.code(), "invalid_key");
                prop_assert!(reserved || expected >= table.len() as u64);
            }
        }
    }

    #[test]
    fn snowflake_routing_is_the_bit_arithmetic(id in any::<u64>(), small in any::<bool>()) {
        let id = if small { id >> 1 } else { id };
        // Twitter's layout over 1024 shards on 3 nodes, shard s on node s % 3.
        let names = ["a", "b", "c"];
        let table: Vec<&str> = (0..1024).map(|s| names[s % 3]).collect();
        let router = router(&names, json!({"type": "id_bits", "layout": "snowflake", "shards": table}));
        let (expected, _) = field(id, 12, 10);
        let reserved = u128::from(id) >= 1 << 63; // the sign bit above 41 + 10 + 12 bits
        match router.route(id) {
            Ok(shard) => {
                prop_assert!(!reserved);
                prop_assert_eq!(u64::from(shard), expected);
                let decoded = router.decode_id(id).unwrap();
                let fields = vec![("timestamp_ms", 1_288_834_974_657 + (id >> 22)), ("sequence", id % 4096)];
                prop_assert_eq!(decoded.fields, fields);
            }
            Err(err) => {
                prop_assert_eq!(err.code(), "invalid_key");
                prop_assert!(reserved);
            }
        }
    }

    #[test]
    fn next_ticket_is_mysqls_least_member_at_or_above(increment in 1u32..=50, offset_seed in any::<u32>(), counter in 0u64..10_000) {
        let offset = offset_seed % increment + 1;
        // Brute force: walk up from the counter to the first member of offset + N * increment.
        let naive = (counter.max(1)..).find(|v| *v >= u64::from(offset) && (v - u64::from(offset)) % u64::from(increment) == 0).unwrap();
        prop_assert_eq!(next_ticket(offset, increment, counter).unwrap(), naive);
    }

    #[test]
    fn ticket_batches_chain_and_match_blocks(increment in 1u32..=20, offset_seed in any::<u32>(), counter in 0u64..1_000_000, sizes in prop::collection::vec(1u32..50, 1..6)) {
        let offset = offset_seed % increment + 1;
        let total: u32 = sizes.iter().sum();
        let whole = ticket_ids(offset, increment, counter, total).unwrap();
        let mut chained = Vec::new();
        let mut next = counter;
        for &size in &sizes {
            let block = reserve_block(offset, increment, next, size).unwrap();
            let batch = ticket_ids(offset, increment, next, size).unwrap();
            prop_assert_eq!(block.first, batch.ids[0]);
            prop_assert_eq!(block.last, *batch.ids.last().unwrap());
            prop_assert_eq!(block.auto_increment, batch.auto_increment);
            chained.extend(batch.ids);
            next = batch.auto_increment;
        }
        prop_assert_eq!(chained, whole.ids);
        prop_assert_eq!(next, whole.auto_increment);
    }
}

#[test]
fn ticket_servers_never_collide_and_cover_the_sequence() {
    for servers in 1u32..=9 {
        let per_server = 200u32;
        let mut all: Vec<u64> =
            (1..=servers).flat_map(|offset| ticket_ids(offset, servers, 1, per_server).unwrap().ids).collect();
        all.sort_unstable();
        let expected: Vec<u64> = (1..=u64::from(servers * per_server)).collect();
        assert_eq!(all, expected, "{servers} servers");
        // And each id decodes back to the server that handed it out.
        let layout = Tickets::new(servers).unwrap();
        for offset in 1..=servers {
            for id in ticket_ids(offset, servers, 1, 50).unwrap().ids {
                assert_eq!(layout.decode(id).unwrap().0, offset - 1);
            }
        }
    }
}

#[test]
fn mysql_manual_auto_increment_examples() {
    // MySQL Reference Manual, auto_increment_increment / auto_increment_offset.
    let first = ticket_ids(1, 10, 1, 4).unwrap();
    assert_eq!(first.ids, [1, 11, 21, 31]);
    assert_eq!(ticket_ids(5, 10, 1, 4).unwrap().ids, [5, 15, 25, 35]);
    // Changing the offset on a table holding 1, 11, 21, 31: the least member above 31.
    assert_eq!(ticket_ids(5, 10, first.auto_increment, 4).unwrap().ids, [35, 45, 55, 65]);
    // MySQL ignores an offset above the increment; refused here.
    assert_eq!(next_ticket(11, 10, 1).unwrap_err().code(), "invalid_argument");
    assert_eq!(next_ticket(0, 10, 1).unwrap_err().code(), "invalid_argument");
    assert_eq!(next_ticket(1, 0, 1).unwrap_err().code(), "invalid_argument");
    assert_eq!(next_ticket(1, 65536, 1).unwrap_err().code(), "invalid_argument");
    assert_eq!(ticket_ids(1, 2, 1, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(ticket_ids(1, 2, 1, 65537).unwrap_err().code(), "limit_exceeded");
    assert_eq!(reserve_block(1, 2, 1, 0).unwrap_err().code(), "invalid_argument");
    // The end of the id space: the last id handed out is u64::MAX - 1.
    assert_eq!(next_ticket(1, 1, u64::MAX - 1).unwrap(), u64::MAX - 1);
    assert_eq!(next_ticket(1, 1, u64::MAX).unwrap_err().code(), "invalid_argument");
    assert_eq!(reserve_block(2, 2, u64::MAX - 2, 2).unwrap_err().code(), "invalid_argument");
}

#[test]
fn published_snowflakes_decode() {
    // Twitter (Wikipedia, "Snowflake ID"): 2022-06-28T16:07:40.105Z, machine 378, sequence 0.
    let twitter = Snowflake::TWITTER.decode(1_541_815_603_606_036_480).unwrap();
    assert_eq!((twitter.timestamp_ms, twitter.shard, twitter.sequence), (1_656_432_460_105, 378, 0));
    // Discord developer docs: worker 1, process 0 (field 1 << 5 | 0), increment 7.
    let discord = Snowflake::new(42, 10, 12, 1_420_070_400_000).unwrap();
    let parts = discord.decode(175_928_847_299_117_063).unwrap();
    assert_eq!((parts.timestamp_ms, parts.shard, parts.sequence), (1_462_015_105_796, 32, 7));
    // Instagram's blog: 1387263000 ms after its epoch, logical shard 1341, 5001 % 1024.
    let instagram = Snowflake::new(41, 13, 10, 1_314_220_021_721).unwrap();
    let id = instagram.compose(1_314_220_021_721 + 1_387_263_000, 1341, 5001 % 1024).unwrap();
    assert_eq!(id, 1_387_263_000 << 23 | 1341 << 10 | 905);
}

#[test]
fn layout_and_range_checks() {
    assert_eq!(ShardHigh::new(0, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(ShardHigh::new(33, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(ShardHigh::new(8, 57).unwrap_err().code(), "invalid_argument");
    assert_eq!(ShardHigh::DEFAULT.compose(0, 1 << 56).unwrap_err().code(), "invalid_argument");
    assert_eq!(ShardHigh::new(32, 32).unwrap().compose(u32::MAX, u64::from(u32::MAX)).unwrap(), u64::MAX);
    assert_eq!(ShardHigh::new(8, 0).unwrap().decode(256).unwrap_err().code(), "invalid_key");
    assert_eq!(Snowflake::new(41, 10, 14, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(Snowflake::new(64, 0, 0, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(Snowflake::new(32, 32, 0, u64::MAX).unwrap_err().code(), "invalid_argument");
    let twitter = Snowflake::TWITTER;
    let last = twitter.last_timestamp_ms();
    assert!(twitter.compose(last, 1023, 4095).is_ok());
    assert_eq!(twitter.compose(last + 1, 0, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(twitter.compose(last, 1024, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(twitter.compose(last, 0, 4096).unwrap_err().code(), "invalid_argument");
    assert_eq!(Tickets::new(0).unwrap_err().code(), "invalid_argument");
    assert_eq!(Tickets::new(3).unwrap().decode(0).unwrap_err().code(), "invalid_key");
    assert_eq!(Tickets::new(3).unwrap().compose(3, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(Tickets::new(1).unwrap().compose(0, u64::MAX - 1).unwrap_err().code(), "invalid_argument");
}

#[test]
fn byte_keys_and_foreign_ids_are_rejected() {
    let router = router(&["a", "b"], json!({"type": "id_bits", "layout": "shard_high"}));
    for key in [Key::Bytes(b"42"), Key::Bytes(b"")] {
        assert_eq!(router.route(key).unwrap_err().code(), "invalid_key");
        assert_eq!(router.replicas(key, 1).unwrap_err().code(), "invalid_key");
    }
    assert_eq!(router.route(1u64 << 56).unwrap(), 1);
    assert_eq!(router.node(1u64 << 56).unwrap(), "b");
    let err = router.route(2u64 << 56).unwrap_err();
    assert_eq!(err.code(), "invalid_key");
    assert!(err.message().contains("shard 2"), "{}", err.message());
    assert_eq!(router.replicas(1u64 << 56, 2).unwrap(), ["b", "a"]);
    let tickets = self::router(&["a", "b"], json!({"type": "id_bits", "layout": "ticket", "servers": 2}));
    assert_eq!(tickets.route(0u64).unwrap_err().code(), "invalid_key");
    assert_eq!((tickets.route(1u64).unwrap(), tickets.route(2u64).unwrap(), tickets.route(3u64).unwrap()), (0, 1, 0));
}

#[test]
fn cells_route_through_the_directory() {
    let router = router(
        &["a", "b", "c"],
        json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 4, "shard_shift": 60,
               "shards": ["c", "a"], "cells": {"0": 1, "3": 0, "15": 1}}),
    );
    assert_eq!(router.shard_range(), 0..2);
    assert_eq!((router.route(0u64).unwrap(), router.node(0u64).unwrap()), (1, "a"));
    assert_eq!((router.route(3u64 << 60 | 9).unwrap(), router.node(3u64 << 60).unwrap()), (0, "c"));
    assert_eq!(router.route(15u64 << 60).unwrap(), 1);
    let err = router.route(7u64 << 60).unwrap_err();
    assert_eq!(err.code(), "invalid_key");
    assert!(err.message().contains("cell 7"), "{}", err.message());
    let decoded = router.decode_id(3u64 << 60 | 9).unwrap();
    assert_eq!(decoded.shard, 0);
    assert_eq!(decoded.fields, [("cell", 3), ("local", 9)]);
    // Cells 0..=3 in id order map to shards 1, 0 (cell 3); cell 15 adds nothing new.
    assert_eq!(router.shards_for_range(0u64, Some(Key::U64(4u64 << 60))).unwrap(), [1, 0]);
    assert_eq!(router.shards_for_range(4u64 << 60, Some(Key::U64(15u64 << 60))).unwrap(), Vec::<u32>::new());
    assert_eq!(router.shards_for_range(4u64 << 60, None).unwrap(), [1]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// shards_for_range of shard_high against enumerating every id of a tiny id space
    /// (shard_bits + shard_shift = 8, so only ids below 256 are valid).
    #[test]
    fn shard_high_ranges_match_enumeration(bits in 1u32..=6, start in 0u64..300, len in 1u64..300, cells in any::<bool>(), open in any::<bool>()) {
        let shift = 8 - bits;
        let table = &["a", "b", "c"][..(1usize << bits).min(3)];
        let strategy = if cells {
            let directory: serde_json::Map<String, Value> =
                (0..1u32 << bits).filter(|c| c % 3 != 1).map(|c| (c.to_string(), json!((c * 7 + 1) % 3))).collect();
            json!({"type": "id_bits", "layout": "shard_high", "shard_bits": bits, "shard_shift": shift, "shards": ["a", "b", "c"], "cells": directory})
        } else {
            json!({"type": "id_bits", "layout": "shard_high", "shard_bits": bits, "shard_shift": shift, "shards": table})
        };
        let router = router(&["a", "b", "c"], strategy);
        let end = start + len;
        let mut naive: Vec<u32> = Vec::new();
        for id in start..if open { 256.max(start) } else { end.min(256) } {
            if let Ok(shard) = router.route(id) {
                if !naive.contains(&shard) {
                    naive.push(shard);
                }
            }
        }
        let fast = router.shards_for_range(start, if open { None } else { Some(Key::U64(end)) }).unwrap();
        prop_assert_eq!(fast, naive);
    }

    /// Moving one shard to another node moves exactly that shard's ids.
    #[test]
    fn editing_one_shard_entry_moves_only_that_shard(moved in 0usize..8, ids in prop::collection::vec(any::<u64>(), 200)) {
        let names = ["a", "b", "c"];
        let before: Vec<&str> = (0..8).map(|s| names[s % 3]).collect();
        let mut after = before.clone();
        after[moved] = names[(moved + 1) % 3];
        let strategy = |table: &[&str]| json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 3, "shards": table});
        let (old, new) = (router(&names, strategy(&before)), router(&names, strategy(&after)));
        for id in ids {
            let id = id >> 3 | (id % 8) << 61;
            prop_assert_eq!(old.route(id).unwrap(), new.route(id).unwrap());
            let changed = old.node(id).unwrap() != new.node(id).unwrap();
            prop_assert_eq!(changed, old.route(id).unwrap() as usize == moved);
        }
    }
}

#[test]
fn documents_round_trip_and_spell_out_defaults() {
    let router = router(&["a", "b"], json!({"type": "id_bits", "layout": "snowflake"}));
    let canonical: Value = serde_json::from_str(&router.to_json()).unwrap();
    assert_eq!(
        canonical["strategy"],
        json!({"type": "id_bits", "layout": "snowflake", "timestamp_bits": 41, "shard_bits": 10, "sequence_bits": 12,
               "epoch_ms": 1_288_834_974_657u64, "shards": ["a", "b"]})
    );
    for strategy in [
        json!({"type": "id_bits", "layout": "shard_high"}),
        json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 16, "shard_shift": 46, "shards": ["b", "b", "a"]}),
        json!({"type": "id_bits", "layout": "snowflake", "epoch_ms": "18446744073709000000", "timestamp_bits": 12}),
        json!({"type": "id_bits", "layout": "ticket", "servers": 3, "shards": ["a", "b"], "cells": {"2": 1, "0": 0}}),
    ] {
        let topology = ids_doc(&["a", "b"], strategy).topology();
        assert_eq!(Topology::from_value(&topology.to_value()).unwrap(), topology);
    }
    let canonical = ids_doc(&["a", "b"], json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 16}))
        .topology()
        .to_value();
    assert_eq!(canonical["strategy"]["shard_shift"], 48);
}

#[test]
fn documents_are_checked() {
    // Each an `id_bits` strategy with these fields, refused as `invalid_topology`.
    let cases = [
        (json!({}), "strategy.layout: missing"),
        (json!({"layout": "uuid"}), "strategy.layout: unknown layout"),
        (json!({"layout": "shard_high", "epoch_ms": 1}), "strategy.epoch_ms: not a parameter"),
        (json!({"layout": "snowflake", "shard_shift": 1}), "strategy.shard_shift"),
        (json!({"layout": "ticket"}), "strategy.servers: missing"),
        (json!({"layout": "ticket", "servers": 65536}), "strategy.servers"),
        (json!({"layout": "shard_high", "shard_bits": 0}), "strategy.shard_bits"),
        (json!({"layout": "shard_high", "shard_bits": 33}), "strategy.shard_bits"),
        (json!({"layout": "shard_high", "shard_bits": 8, "shard_shift": 57}), "strategy.shard_shift"),
        (json!({"layout": "snowflake", "sequence_bits": 14}), "strategy.timestamp_bits: timestamp_bits + shard_bits"),
        (json!({"layout": "snowflake", "timestamp_bits": 42, "epoch_ms": "18446744073709551615"}), "strategy.epoch_ms"),
        (json!({"layout": "snowflake", "epoch_ms": -1}), "strategy.epoch_ms"),
        (json!({"layout": "shard_high", "shards": []}), "strategy.shards: needs"),
        (json!({"layout": "shard_high", "shards": ["a", "z"]}), "strategy.shards[1]: names node \"z\""),
        (json!({"layout": "shard_high", "shard_bits": 1, "shards": ["a", "b", "a"]}), "strategy.shards: 3 shards"),
        (json!({"layout": "ticket", "servers": 1}), "strategy.shards: absent"),
        (json!({"layout": "shard_high", "cells": {}}), "strategy.cells: the cell directory is empty"),
        (json!({"layout": "shard_high", "cells": {"01": 0}}), "strategy.cells.01"),
        (json!({"layout": "shard_high", "cells": {"256": 0}}), "strategy.cells.256"),
        (json!({"layout": "shard_high", "cells": {"1": 2}}), "strategy.cells.1"),
        (json!({"layout": "shard_high", "cells": [0]}), "strategy.cells: expected an object"),
    ];
    for (fields, prefix) in cases {
        let mut strategy = fields;
        strategy["type"] = json!("id_bits");
        let (actual, message) = load_error(&["a", "b"], strategy.clone());
        assert_eq!(actual, "invalid_topology", "{strategy}: {message}");
        assert!(message.starts_with(prefix), "{strategy}: {message}");
    }
    // Node weights mean nothing here: rejected rather than ignored.
    let weighted =
        ids_doc(&["a", "b"], json!({"type": "id_bits", "layout": "shard_high"})).node_field(1, "weight", json!(2));
    assert_eq!(weighted.load().unwrap_err().code(), "invalid_topology");
}

#[test]
fn generator_operations_leave_the_topology_unchanged() {
    let snowflake = ids_doc(&["a", "b"], json!({"type": "id_bits", "layout": "snowflake"})).topology();
    let result = ops::apply(
        &snowflake,
        &json!({"op": "id_bits_compose", "timestamp_ms": "1656432460105", "shard": 1, "sequence": 0}),
    )
    .unwrap();
    let id: u64 = result["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(id, Snowflake::TWITTER.compose(1_656_432_460_105, 1, 0).unwrap());
    assert_eq!(Topology::from_value(&result["topology"]).unwrap(), snowflake);
    let code = |topology: &Topology, op: Value| ops::apply(topology, &op).unwrap_err().code();
    // Shard 2 has no entry in the 2-shard table: no generator mints an unroutable id.
    assert_eq!(
        code(&snowflake, json!({"op": "id_bits_compose", "timestamp_ms": 1656432460105u64, "shard": 2, "sequence": 0})),
        "invalid_argument"
    );
    assert_eq!(
        code(&snowflake, json!({"op": "id_bits_compose", "timestamp_ms": 0, "shard": 0, "sequence": 0})),
        "invalid_argument"
    );
    assert_eq!(
        code(&snowflake, json!({"op": "id_bits_compose", "timestamp_ms": 1656432460105u64, "shard": 0})),
        "invalid_argument"
    );
    assert_eq!(
        code(
            &snowflake,
            json!({"op": "id_bits_compose", "timestamp_ms": 1656432460105u64, "shard": 0, "sequence": 0, "local": 1})
        ),
        "invalid_argument"
    );
    assert_eq!(
        code(&snowflake, json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 1})),
        "invalid_argument"
    );

    let tickets = ids_doc(&["a", "b"], json!({"type": "id_bits", "layout": "ticket", "servers": 2})).topology();
    let result =
        ops::apply(&tickets, &json!({"op": "id_bits_tickets", "shard": 1, "auto_increment": 1, "count": 3})).unwrap();
    assert_eq!(result["ids"], json!(["2", "4", "6"]));
    assert_eq!(result["auto_increment"], "7");
    assert_eq!(Topology::from_value(&result["topology"]).unwrap(), tickets);
    let block = ops::apply(
        &tickets,
        &json!({"op": "id_bits_reserve_block", "shard": 0, "auto_increment": "7", "block_size": 1000}),
    )
    .unwrap();
    assert_eq!(
        (&block["first"], &block["last"], &block["step"], &block["count"], &block["auto_increment"]),
        (&json!("7"), &json!("2005"), &json!(2), &json!(1000), &json!("2006"))
    );
    let router = Router::new(tickets.clone()).unwrap();
    assert_eq!(router.route(2005u64).unwrap(), 0);
    assert_eq!(
        code(&tickets, json!({"op": "id_bits_tickets", "shard": 2, "auto_increment": 1, "count": 1})),
        "invalid_argument"
    );
    assert_eq!(
        code(&tickets, json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": 1, "count": 0})),
        "invalid_argument"
    );
    assert_eq!(
        code(&tickets, json!({"op": "id_bits_tickets", "shard": 0, "auto_increment": -1, "count": 1})),
        "invalid_argument"
    );
    let composed = ops::apply(&tickets, &json!({"op": "id_bits_compose", "shard": 1, "sequence": 2})).unwrap();
    assert_eq!(composed["id"], "6");

    let cells =
        ids_doc(&["a", "b"], json!({"type": "id_bits", "layout": "shard_high", "shard_bits": 4, "cells": {"9": 1}}))
            .topology();
    let composed = ops::apply(&cells, &json!({"op": "id_bits_compose", "cell": 9, "local": 5})).unwrap();
    assert_eq!(composed["id"], (9u64 << 60 | 5).to_string());
    assert_eq!(code(&cells, json!({"op": "id_bits_compose", "cell": 8, "local": 5})), "invalid_argument");
    assert_eq!(code(&cells, json!({"op": "id_bits_compose", "shard": 1, "local": 5})), "invalid_argument");
    // Generators do not fit other strategies, and node edits do not fit id_bits (a table).
    let jump = ids_doc(&["a"], json!({"type": "jump"})).topology();
    assert_eq!(code(&jump, json!({"op": "id_bits_compose", "shard": 0, "local": 0})), "invalid_argument");
    assert_eq!(code(&cells, json!({"op": "add_node", "node": {"id": "c"}})), "invalid_argument");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any numbers in any parameter give a router or an error, and a router answers any
    /// id and any range without panicking.
    #[test]
    fn arbitrary_parameters_never_panic(
        layout in prop::sample::select(vec!["shard_high", "snowflake", "ticket"]),
        numbers in prop::collection::vec(prop_oneof![0u64..70, any::<u64>()], 5),
        cells in prop::collection::vec((0u64..5000, 0u64..4), 0..4),
        ids in prop::collection::vec(any::<u64>(), 8),
    ) {
        let mut strategy = json!({"type": "id_bits", "layout": layout});
        let names: &[&str] = match layout {
            "shard_high" => &["shard_bits", "shard_shift"],
            "snowflake" => &["timestamp_bits", "shard_bits", "sequence_bits", "epoch_ms"],
            _ => &["servers"],
        };
        for (name, number) in names.iter().zip(&numbers) {
            strategy[*name] = json!(number);
        }
        if !cells.is_empty() {
            strategy["cells"] = Value::Object(cells.iter().map(|(c, s)| (c.to_string(), json!(s))).collect());
            strategy["shards"] = json!(["a", "b", "a", "b"]);
        }
        if let Ok(router) = ids_doc(&["a", "b"], strategy).load() {
            answers_any_id(&router, &ids, numbers[0], 2);
        }
    }
}

/// The module doc's recipe: an id_groups group of `k` weight-1 shards listing server `k`
/// first routes ids to the same nodes as the ticket layout of `k` servers.
#[test]
fn ticket_layout_equals_a_rotated_id_group() {
    let names = ["t1", "t2", "t3", "t4"];
    for servers in 1..=4usize {
        let tickets = router(&names[..servers], json!({"type": "id_bits", "layout": "ticket", "servers": servers}));
        let mut order: Vec<&str> = vec![names[servers - 1]];
        order.extend(&names[..servers - 1]);
        let shards: Vec<Value> = order.iter().map(|node| json!({ "node": node })).collect();
        let groups = router(
            &names[..servers],
            json!({"type": "id_groups", "groups": [{"id": "era-1", "intervals": [[1, 100_000]], "shards": shards, "writable": true}]}),
        );
        for id in 1..2_000u64 {
            assert_eq!(tickets.node(id).unwrap(), groups.node(id).unwrap(), "{servers} servers, id {id}");
        }
    }
}
