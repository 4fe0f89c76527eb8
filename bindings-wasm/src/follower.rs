//! `TopologyFollower` and `followerDefaults`: the core's sans-IO topology follower
//! ([`ss::follower`]) as a JavaScript class, the same shape as the Node addon's. Conversion
//! only, every decision is the core's; what the two JavaScript packages share of it (the
//! refusals the core does not word, the flat `Offered`) is `bindings-js/follower.rs`,
//! included as [`crate::js_follower`]. Outcomes are the package's `Offered`
//! (`bindings-js/shared.mjs`, made by `makeOffered` in `js/support.mjs`).
//!
//! The follower needs routing only, not the topology operations: it is in every build, a
//! slim one too.
//!
//! The core state is in a `RefCell`, borrowed mutably only while the core runs, after
//! every argument was read: reading an argument may run JavaScript (a getter, a proxy
//! trap), which may call the follower again.

use alloc::string::String;
use core::cell::RefCell;

use js_sys::{Array, Object};
use shardroute as sr;
use sr::session as ss;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::js_follower::{self as shared, FlatOffered};
use crate::key::{self, milliseconds};
use crate::router::Router;
use crate::topology::{self, record};

/// The follower's defaults (the core's constants, `FollowerConfig::default`) as an object of
/// the core's field names: `reconnect_first_ms`, `reconnect_max_ms`.
#[wasm_bindgen(js_name = followerDefaults)]
pub fn follower_defaults() -> Result<JsValue> {
    Ok(topology::value_to_js(&ss::FollowerConfig::default().to_value(), "followerDefaults")?)
}

/// Follows a topology from a source (etcd, ZooKeeper, an HTTP endpoint), without I/O: the
/// shell hands it every value the source shows, with the source's revision and the time;
/// it installs newer epochs, refuses what it must not install (keeping the last good
/// router), says when to reconnect after the source is lost, and builds a publisher's
/// compare-and-swap write.
#[wasm_bindgen]
pub struct TopologyFollower {
    inner: RefCell<ss::Follower>,
}

#[wasm_bindgen]
impl TopologyFollower {
    /// A follower holding no router yet, with `config` (the fields of `followerDefaults()`
    /// to change; `undefined` or `null`: the defaults).
    ///
    /// Throws `invalid_argument` for an unknown config field or a value out of range.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &JsValue) -> Result<TopologyFollower> {
        // The order of the addon, whose index.js serializes `config` before the call.
        let config =
            if config.is_undefined() || config.is_null() { None } else { Some(topology::data_json(config, "config")?) };
        Ok(TopologyFollower { inner: RefCell::new(ss::Follower::new(shared::config(config.as_deref())?)) })
    }

    /// A document (JSON text or an object) from the source at `revision`, seen at `nowMs`:
    /// an `Offered` (a refused document is a result, not a throw).
    ///
    /// Throws `invalid_topology` for a document that is neither text nor an object, or an
    /// object JSON cannot hold; `invalid_argument` for a bad revision or time.
    pub fn offer(&self, document: &JsValue, revision: &JsValue, now_ms: &JsValue) -> Result<Offered> {
        let document = topology::json_text(document, "document")?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(offered(self.with(|follower| follower.offer(&document, revision, now))?))
    }

    /// A binary dictionary (a `Uint8Array`, as `encodeDictionary` writes it) from the
    /// source at `revision`, seen at `nowMs`: an `Offered`.
    ///
    /// Throws `invalid_argument` for bytes that are not a readable `Uint8Array`, a bad
    /// revision or time.
    #[wasm_bindgen(js_name = offerDictionary)]
    pub fn offer_dictionary(&self, bytes: &JsValue, revision: &JsValue, now_ms: &JsValue) -> Result<Offered> {
        let bytes = key::bytes_from_js(bytes, "bytes")?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(offered(self.with(|follower| follower.offer_dictionary(&bytes, revision, now))?))
    }

    /// A value from a source of plain bytes: a binary dictionary by its magic, otherwise
    /// UTF-8 JSON text (invalid UTF-8 is a refusal, `invalid_topology`).
    ///
    /// Throws `invalid_argument` for bytes that are not a readable `Uint8Array`, a bad
    /// revision or time.
    #[wasm_bindgen(js_name = offerBytes)]
    pub fn offer_bytes(&self, bytes: &JsValue, revision: &JsValue, now_ms: &JsValue) -> Result<Offered> {
        let bytes = key::bytes_from_js(bytes, "bytes")?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(offered(self.with(|follower| follower.offer_bytes(&bytes, revision, now))?))
    }

    /// The source was lost at `nowMs`: when to reconnect, a bigint on the same clock.
    ///
    /// Throws `invalid_argument` for a bad time.
    pub fn disconnected(&self, now_ms: &JsValue) -> Result<u64> {
        let now = milliseconds(now_ms)?;
        Ok(self.with(|follower| follower.disconnected(now))?)
    }

    /// The source answers again: the next loss waits the first backoff.
    pub fn connected(&self) -> Result<()> {
        Ok(self.with(ss::Follower::connected)?)
    }

    /// When to reconnect (a `bigint`), until connected; `null` while connected.
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self) -> Result<JsValue> {
        Ok(self.with(|follower| follower.next_deadline())?.map_or(JsValue::NULL, JsValue::from))
    }

    /// The router installed last (a new object each time), or `null`.
    #[wasm_bindgen(getter)]
    pub fn router(&self) -> Result<JsValue> {
        Ok(match self.with(|follower| follower.router().cloned())? {
            Some(router) => Router::wrap(router).into(),
            None => JsValue::NULL,
        })
    }

    /// The source revision of the document installed last (a bigint), or `null`.
    #[wasm_bindgen(getter)]
    pub fn revision(&self) -> Result<JsValue> {
        Ok(self.with(|follower| follower.revision())?.map_or(JsValue::NULL, JsValue::from))
    }

    /// The counters, as the core names them, each a bigint (`refused` too: code to count).
    #[wasm_bindgen(getter)]
    pub fn stats(&self) -> Result<Object> {
        let stats = self.with(|follower| follower.stats().clone())?;
        let entry = |name: &str, count: u64| Array::of2(&name.into(), &count.into());
        let entries: Array = shared::counters(&stats).iter().map(|&(name, count)| entry(name, count)).collect();
        let refused: Array = stats.refused.iter().map(|&(code, count)| entry(code, count)).collect();
        entries.push(&Array::of2(&"refused".into(), &record(&refused)?.into()));
        Ok(record(&entries)?)
    }

    /// The settings in force: every field of `followerDefaults()`.
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> Result<JsValue> {
        let config = self.with(|follower| follower.config().to_value())?;
        Ok(topology::value_to_js(&config, "config")?)
    }
}

/// The publisher's write, which a routing tier does not make: left out of a build without
/// the `full-api` feature (the route build, `shardroute-wasm/route`).
#[cfg(feature = "full-api")]
#[wasm_bindgen]
impl TopologyFollower {
    /// The compare-and-swap write of `document` (JSON text or an object):
    /// `{expectedRevision, epoch, document}`.
    ///
    /// Throws the document's errors (`invalid_topology`, `limit_exceeded`, `no_nodes`), and
    /// `stale_epoch` unless its epoch is the held one + 1.
    pub fn publish(&self, document: &JsValue) -> Result<Object> {
        let document = topology::json_text(document, "document")?;
        let write = self.with(|follower| follower.publish(&document))??;
        let entry = |name: &str, value: JsValue| Array::of2(&name.into(), &value);
        Ok(record(&Array::of3(
            &entry("expectedRevision", write.expected_revision.map_or(JsValue::NULL, JsValue::from)),
            &entry("epoch", write.epoch.into()),
            &entry("document", write.document.into()),
        ))?)
    }
}

impl TopologyFollower {
    /// `call` on the core follower, borrowed for one call after its arguments were read.
    fn with<R>(&self, call: impl FnOnce(&mut ss::Follower) -> R) -> sr::Result<R> {
        Ok(call(&mut *self.inner.try_borrow_mut().map_err(|_| shared::busy())?))
    }
}

/// A `revision` argument ([`shared::revision`]).
fn revision_argument(value: &JsValue) -> sr::Result<u64> {
    key::with_type(value, |got| shared::revision(got, || key::bigint_u64(value)))
}

/// The package's `Offered` of a core outcome.
fn offered(offered: ss::Offered) -> Offered {
    let FlatOffered { kind, epoch, code, message } = FlatOffered::from(offered);
    make_offered(kind, epoch, code, message)
}

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// The package's `Offered` (`bindings-js/shared.mjs`); the glue re-exports it.
    #[wasm_bindgen(reexport)]
    pub type Offered;

    /// A new `Offered` of the fields of a [`FlatOffered`], in its order (`undefined` for
    /// `None`, which the constructor makes `null`).
    #[wasm_bindgen(js_name = makeOffered)]
    fn make_offered(kind: &str, epoch: Option<u64>, code: Option<&str>, message: Option<String>) -> Offered;
}
