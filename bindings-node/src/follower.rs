//! [`TopologyFollower`]: the core's sans-IO topology follower ([`ss::follower`]) for
//! JavaScript. Conversion only, every decision is the core's; what the two JavaScript
//! packages share of it (the refusals the core does not word, the flat `Offered`) is
//! `bindings-js/follower.rs`, included as [`crate::js_follower`].
//!
//! `index.js` wraps the native follower as the public `TopologyFollower`: it serializes
//! `config` and object documents (`documentToJson`), makes the package's `Offered` from
//! the fields [`RawOffered`] gives, parses the JSON text of `config` and
//! `followerDefaults`, and wraps the native `router` as a public `Router`.
//!
//! The core state is in a `RefCell`, borrowed mutably only while the core runs, after
//! every argument was read.

use std::cell::{RefCell, RefMut};
use std::sync::Arc;

use napi::bindgen_prelude::{BigInt, Object, TypedArrayType, Uint8ArraySlice};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;
use sr::session as ss;

use crate::errors::{self, Result, Throw};
use crate::js_follower::{self as shared, FlatOffered};
use crate::key;
use crate::router::Router;
use crate::session::{milliseconds, unsigned};

/// The follower's defaults (`FollowerConfig::default`, the core's constants) as JSON text,
/// which `index.js` parses: `followerDefaults()`.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn follower_defaults() -> String {
    ss::FollowerConfig::default().to_value().to_string()
}

/// An offer's outcome as the fields of the package's `Offered`, in its constructor's order
/// ([`FlatOffered`]); `None` is `null`.
pub type RawOffered = (&'static str, Option<BigInt>, Option<&'static str>, Option<String>);

fn raw(offered: ss::Offered) -> RawOffered {
    let flat = FlatOffered::from(offered);
    (flat.kind, flat.epoch.map(BigInt::from), flat.code, flat.message)
}

/// A topology follower ([`ss::Follower`]); `index.js` wraps it as the public
/// `TopologyFollower`.
#[napi]
pub struct TopologyFollower {
    inner: RefCell<ss::Follower>,
}

#[napi]
impl TopologyFollower {
    /// A follower holding no router yet, with `config` (JSON text from `index.js`, or
    /// `undefined` or `null` for the defaults).
    ///
    /// # Errors
    /// `invalid_argument` for a bad config ([`ss::FollowerConfig::from_value`]).
    #[napi(constructor, catch_unwind)]
    pub fn new(config: Unknown) -> Result<Self> {
        let config = match config.get_type().or_throw()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(crate::text_argument(config, "config")?),
        };
        let config = shared::config(config.as_deref()).or_throw()?;
        Ok(TopologyFollower { inner: RefCell::new(ss::Follower::new(config)) })
    }

    /// A document (JSON text; `index.js` serializes objects) from the source at `revision`,
    /// seen at `nowMs` ([`ss::Follower::offer`]): a refused document is a result.
    ///
    /// # Errors
    /// `invalid_topology` for a document that is not a string; `invalid_argument` for a bad
    /// revision or time.
    #[napi(catch_unwind)]
    pub fn offer(&self, document: Unknown, revision: Unknown, now_ms: Unknown) -> Result<RawOffered> {
        let document = crate::document_text(document, "document", sr::ErrorKind::InvalidTopology)?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(raw(self.follower()?.offer(&document, revision, now)))
    }

    /// A binary dictionary (a `Uint8Array`) from the source ([`ss::Follower::offer_dictionary`]).
    ///
    /// # Errors
    /// `invalid_argument` for bytes that are not a readable `Uint8Array`, a bad revision or
    /// time.
    #[napi(catch_unwind)]
    pub fn offer_dictionary(&self, bytes: Unknown, revision: Unknown, now_ms: Unknown) -> Result<RawOffered> {
        let bytes: Uint8ArraySlice = key::typed_array(bytes, TypedArrayType::Uint8, "bytes")?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(raw(self.follower()?.offer_dictionary(&bytes, revision, now)))
    }

    /// A value from a source of plain bytes ([`ss::Follower::offer_bytes`]): a binary
    /// dictionary by its magic, otherwise UTF-8 JSON text.
    ///
    /// # Errors
    /// `invalid_argument` for bytes that are not a readable `Uint8Array`, a bad revision or
    /// time.
    #[napi(catch_unwind)]
    pub fn offer_bytes(&self, bytes: Unknown, revision: Unknown, now_ms: Unknown) -> Result<RawOffered> {
        let bytes: Uint8ArraySlice = key::typed_array(bytes, TypedArrayType::Uint8, "bytes")?;
        let revision = revision_argument(revision)?;
        let now = milliseconds(now_ms)?;
        Ok(raw(self.follower()?.offer_bytes(&bytes, revision, now)))
    }

    /// The source was lost at `nowMs`: when to reconnect ([`ss::Follower::disconnected`]).
    ///
    /// # Errors
    /// `invalid_argument` for a bad time.
    #[napi(catch_unwind)]
    pub fn disconnected(&self, now_ms: Unknown) -> Result<BigInt> {
        let now = milliseconds(now_ms)?;
        Ok(BigInt::from(self.follower()?.disconnected(now)))
    }

    /// The source answers again ([`ss::Follower::connected`]).
    #[napi(catch_unwind)]
    pub fn connected(&self) -> Result<()> {
        self.follower()?.connected();
        Ok(())
    }

    /// When to reconnect, a `bigint`, until connected; `null` while connected
    /// ([`ss::Follower::next_deadline`]).
    #[napi(catch_unwind)]
    pub fn next_deadline(&self) -> Result<Option<BigInt>> {
        Ok(self.follower()?.next_deadline().map(BigInt::from))
    }

    /// The compare-and-swap write of `document` (JSON text; `index.js` serializes objects):
    /// `{ expectedRevision, epoch, document }` ([`ss::Follower::publish`]).
    ///
    /// # Errors
    /// The core's: the document's (`invalid_topology`, `limit_exceeded`, `no_nodes`),
    /// `stale_epoch` unless its epoch is the held one + 1.
    #[napi(catch_unwind)]
    pub fn publish<'env>(&self, env: &'env Env, document: Unknown) -> Result<Object<'env>> {
        let document = crate::document_text(document, "document", sr::ErrorKind::InvalidTopology)?;
        let write = self.follower()?.publish(&document).or_throw()?;
        let mut object = Object::new(env).or_throw()?;
        object.set("expectedRevision", write.expected_revision.map(BigInt::from)).or_throw()?;
        object.set("epoch", BigInt::from(write.epoch)).or_throw()?;
        object.set("document", write.document).or_throw()?;
        Ok(object)
    }

    /// The router installed last (`index.js` wraps it as a public `Router`), or `null`.
    #[napi(getter, catch_unwind)]
    pub fn router(&self) -> Result<Option<Router>> {
        Ok(self.follower()?.router().map(|router| Router { inner: Arc::new(router.clone()) }))
    }

    /// The source revision of the document installed last, or `null`.
    #[napi(getter, catch_unwind)]
    pub fn revision(&self) -> Result<Option<BigInt>> {
        Ok(self.follower()?.revision().map(BigInt::from))
    }

    /// The counters, as the core's `FollowerStats::to_value` names them, each a `bigint`
    /// (`refused` too: code to count).
    #[napi(getter, catch_unwind)]
    pub fn stats<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let follower = self.follower()?;
        let stats = follower.stats();
        let mut object = Object::new(env).or_throw()?;
        for (name, count) in shared::counters(stats) {
            object.set(name, BigInt::from(count)).or_throw()?;
        }
        let mut refused = Object::new(env).or_throw()?;
        for &(code, count) in &stats.refused {
            refused.set(code, BigInt::from(count)).or_throw()?;
        }
        object.set("refused", refused).or_throw()?;
        Ok(object)
    }

    /// The settings in force, as JSON text (`index.js` parses it).
    #[napi(getter, catch_unwind)]
    pub fn config(&self) -> Result<String> {
        Ok(self.follower()?.config().to_value().to_string())
    }
}

impl TopologyFollower {
    /// The core follower, borrowed for one call after its arguments were read.
    fn follower(&self) -> Result<RefMut<'_, ss::Follower>> {
        self.inner.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))
    }
}

/// A `revision` argument ([`shared::revision`]).
fn revision_argument(value: Unknown<'_>) -> Result<u64> {
    unsigned(value, |got, bigint| shared::revision(got, || bigint))
}
