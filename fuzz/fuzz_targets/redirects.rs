//! Redirect texts: `MOVED`/`ASK` errors as nodes send them and as client libraries wrap
//! them, with slots and addresses near the edges, or any text; and addresses.
//!
//! Properties: nothing panics; a parsed redirect has a slot below 16,384 and an address
//! `check_address` accepts, and its own text (`KIND slot address`) parses to it again;
//! the session's classifier gives a redirect only with such a slot; an endpoint that
//! parses writes an address that parses to the same endpoint; a `MOVED` that a
//! `redis_cluster` router takes gives a router whose document loads back, naming the
//! address's node as the slot's owner.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shardroute::session::{classify, Endpoint, Outcome};
use shardroute::strategy::compat::redis_cluster::redirect::{check_address, Redirect};
use shardroute::Router;
use shardroute_fuzz::redis;

const NAMES: &[&str] = &[
    "MovedError",
    "AskError",
    "ResponseError",
    "ClusterDownError",
    "TryAgainError",
    "ConnectionError",
    "TimeoutError",
    "ReplyError",
    "Error",
    "ECONNREFUSED",
];

fn router() -> Router {
    Router::from_json(
        r#"{"format": "shardroute/1", "epoch": 5, "nodes": [
            {"id": "m1", "address": "10.0.0.1:7000"}, {"id": "m2", "address": "10.0.0.2:7000"},
            {"id": "r1", "address": "10.0.1.1:7000"}],
            "strategy": {"type": "redis_cluster", "slots": [
            {"start": 0, "end": 8191, "nodes": ["m1", "r1"]}, {"start": 8192, "end": 16383, "nodes": ["m2"]}]}}"#,
    )
    .expect("a valid router")
}

fn run(u: &mut Unstructured) -> Result<()> {
    let text = redis::redirect_text(u)?;
    if let Ok(redirect) = Redirect::parse(&text) {
        assert!(redirect.slot < 16_384);
        assert!(check_address(&redirect.address).is_ok());
        let again = format!("{} {} {}", redirect.kind.as_str(), redirect.slot, redirect.address);
        assert_eq!(Redirect::parse(&again).expect("its own text parses"), redirect);
        let router = router();
        if let Ok(next) = router.moved(redirect.slot, &redirect.address) {
            let reloaded = Router::from_json(&next.to_json()).expect("a MOVED result loads back");
            let owner = reloaded.shard_owner(redirect.slot).expect("the slot has an owner");
            let node = reloaded.nodes().iter().find(|node| node.id == owner).expect("the owner is a node");
            assert_eq!(node.address.as_deref().unwrap_or(&node.id), redirect.address);
        }
        assert_eq!(router.ask(redirect.slot, &redirect.address).ok(), Some(redirect.address.as_str()));
    }
    let mut names = Vec::new();
    for _ in 0..u.int_in_range(0..=3u8)? {
        names.push(*u.choose(NAMES)?);
    }
    let outcome = classify(&text, &names);
    if let Outcome::Moved(redirect) | Outcome::Ask(redirect) = &outcome {
        assert!(redirect.slot < 16_384);
    }
    let _ = (outcome.rule(), outcome.name());
    for candidate in [text.as_str(), text.trim()] {
        if let Ok(endpoint) = Endpoint::parse(candidate) {
            let again = Endpoint::parse(&endpoint.address()).expect("an endpoint's address parses");
            assert_eq!(again, endpoint);
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
