//! [`parse_redirect`]: Redis Cluster's `MOVED` and `ASK` errors read by the core
//! ([`sr::strategy::compat::redis_cluster::redirect`]).

use napi::Unknown;
use napi_derive::napi;
use shardroute as sr;

use crate::errors::{Result, Throw};

/// A redirection error read: `{ kind: 'MOVED' | 'ASK', slot, address }`.
#[napi(object, object_from_js = false)]
pub struct Redirect {
    /// `MOVED` or `ASK`.
    pub kind: &'static str,
    /// The slot, in `0..16384`.
    pub slot: u32,
    /// The target's `host:port` as the node wrote it.
    pub address: String,
}

/// Reads a `MOVED <slot> <host:port>` or `ASK <slot> <host:port>` error as a client
/// receives it (a leading `-` and surrounding white space allowed).
///
/// # Errors
/// `invalid_argument` for a value that is not a string and for any other line.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn parse_redirect(line: Unknown) -> Result<Redirect> {
    let line = crate::text_argument(line, "line")?;
    let redirect = sr::strategy::compat::redis_cluster::redirect::Redirect::parse(&line).or_throw()?;
    Ok(Redirect { kind: redirect.kind.as_str(), slot: redirect.slot, address: redirect.address })
}
