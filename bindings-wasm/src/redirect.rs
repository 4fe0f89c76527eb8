//! `parseRedirect`: Redis Cluster's `MOVED` and `ASK` errors read by the core
//! ([`sr::strategy::compat::redis_cluster::redirect`]).

use js_sys::{Array, Object};
use shardroute as sr;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::key;
use crate::topology::record;

/// Reads a redirection error as a client receives it (`MOVED 3999 127.0.0.1:6381`, `ASK
/// ...`; a leading `-` and surrounding white space allowed): `{kind, slot, address}`,
/// `kind` being `'MOVED'` or `'ASK'`.
///
/// Throws `invalid_argument` for a value that is not a string and for any other line
/// (another error, a slot outside `0..16384`, an address without a port).
#[wasm_bindgen(js_name = parseRedirect)]
pub fn parse_redirect(line: &JsValue) -> Result<Object> {
    let line = key::text_argument(line, "line")?;
    let redirect = sr::strategy::compat::redis_cluster::redirect::Redirect::parse(&line)?;
    Ok(record(&Array::of3(
        &Array::of2(&JsValue::from_str("kind"), &JsValue::from_str(redirect.kind.as_str())),
        &Array::of2(&JsValue::from_str("slot"), &redirect.slot.into()),
        &Array::of2(&JsValue::from_str("address"), &JsValue::from_str(&redirect.address)),
    ))?)
}
