//! The hot single-key calls (`Router.route`, and `Router.node` as a node index) as plain
//! N-API functions, one pair per router, each holding its router as the function's own data.
//!
//! Why not `#[napi]` methods: napi-rs 3 wraps every call in a native-borrow scope (thread
//! local bookkeeping, a mutex, a barrier), and checks an `External` argument against a
//! locked global registry. Measured on Node 20 on the benchmark machine, an empty
//! `#[napi] fn(key: Unknown) -> u32` cost ~100 ns a call, an empty plain N-API function
//! ~17 ns, and routing a short string key in the core 15-30 ns. A function made with
//! `napi_create_function` gets its data pointer back from `napi_get_cb_info`, and no
//! JavaScript code can change that pointer: nothing has to be checked per call.
//!
//! The functions only convert: the key with [`key::from_js`], the result with N-API, the
//! error with [`errors`]; the router is the core's.

use std::ffi::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{sys, Array, JsError};
use napi::{Env, Unknown};
use shardroute as sr;

use crate::errors::{Result, Throw};
use crate::key;

/// `[route, nodeIndex]`: two JavaScript functions of one argument (a key) over `router`:
/// the same as `Router.route`, and the index in the router's nodes of `Router.node`'s
/// answer (`index.js` maps it to the id through the router's id array, made once: returning
/// an existing string is cheaper than making one per call, and Node 20 cannot hold strings
/// in N-API references).
///
/// # Errors
/// N-API's, if a function cannot be made.
pub fn functions<'env>(env: &'env Env, router: &Arc<sr::Router>) -> Result<Array<'env>> {
    let route = function(env, "route", route_callback, Arc::clone(router))?;
    let node_index = function(env, "nodeIndex", node_index_callback, Arc::clone(router))?;
    let mut array = env.create_array(2).or_throw()?;
    array.set(0, route).or_throw()?;
    array.set(1, node_index).or_throw()?;
    Ok(array)
}

/// `Router.route`: the shard, a `number`.
unsafe extern "C" fn route_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: N-API calls this with the env and callback info of a call of a function
    // made by `function`.
    unsafe { call(env, info, |router, key| uint32(env, router.route(key::from_js(key)?.as_core()).or_throw()?)) }
}

/// The index of `Router.node`'s node in the router's nodes, a `number`.
unsafe extern "C" fn node_index_callback(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: as for `route_callback`.
    unsafe { call(env, info, |router, key| uint32(env, router.node_index(key::from_js(key)?.as_core()).or_throw()?)) }
}

/// `number` as a JavaScript number.
pub(crate) fn uint32(env: sys::napi_env, number: u32) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: `env` is the env of the running call.
    check(unsafe { sys::napi_create_uint32(env, number, &mut value) }).or_throw()?;
    Ok(value)
}

/// A JavaScript function named `name` whose N-API callback is `callback` and whose data is
/// `data` (a router, a session), which it holds: the function's finalizer releases it.
pub(crate) fn function<'env, T: 'static>(
    env: &'env Env,
    name: &str,
    callback: Callback,
    data: T,
) -> Result<Unknown<'env>> {
    let raw = env.raw();
    let data = Box::into_raw(Box::new(data));
    let mut value = ptr::null_mut();
    // SAFETY: `data` outlives the function (freed by `finalize` when the function is
    // collected); the callbacks only read it.
    let created = check(unsafe {
        sys::napi_create_function(
            raw,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(callback),
            data.cast(),
            &mut value,
        )
    })
    .and_then(|()| {
        // SAFETY: as above; `finalize` runs once, after the last call.
        check(unsafe {
            sys::napi_add_finalizer(raw, value, data.cast(), Some(finalize::<T>), ptr::null_mut(), ptr::null_mut())
        })
    });
    if let Err(err) = created {
        // SAFETY: the function (if any) has no finalizer, so `data` is still only ours.
        drop(unsafe { Box::from_raw(data) });
        return Err(err).or_throw();
    }
    // SAFETY: `value` is a function of `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(raw, value) })
}

/// The N-API callback type.
pub(crate) type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// The body of every hot router callback: reads the one argument and the function's
/// router, runs `body`, and throws its error.
///
/// # Safety
/// `env` and `info` must be those of a call of a function made by [`function`] with an
/// `Arc<Router>`.
#[inline(always)]
unsafe fn call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    body: impl FnOnce(&sr::Router, Unknown<'_>) -> Result<sys::napi_value>,
) -> sys::napi_value {
    // SAFETY: as the caller promises.
    unsafe { call_with::<Arc<sr::Router>, 1>(env, info, |router, [key]| body(router, key)) }
}

/// The body of every hot callback: reads `N` arguments and the function's data, runs
/// `body`, and throws its error. A panic (which the core promises never to raise) becomes
/// a thrown `Error`, as `#[napi(catch_unwind)]` does.
///
/// # Safety
/// `env` and `info` must be those of a call of a function made by [`function`] with a `T`.
#[inline(always)]
pub(crate) unsafe fn call_with<T, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    body: impl FnOnce(&T, [Unknown<'_>; N]) -> Result<sys::napi_value>,
) -> sys::napi_value {
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut argc = N;
        // N-API fills arguments the caller left out with `undefined`.
        let mut argv = [ptr::null_mut(); N];
        let mut data = ptr::null_mut();
        // SAFETY: the env and callback info of this call; `N` argument slots.
        check(unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) })
            .or_throw()?;
        // SAFETY: `data` is the `T` this function was made with (`function`), alive until
        // the function's finalizer runs.
        let data = unsafe { &*data.cast::<T>() };
        // SAFETY: every `argv` entry is a live value of this call.
        body(data, argv.map(|value| unsafe { Unknown::from_raw_unchecked(env, value) }))
    }));
    let result = result.unwrap_or_else(|payload| Err(napi::bindgen_prelude::panic_to_error(payload)).or_throw());
    match result {
        Ok(value) => value,
        Err(err) => {
            // SAFETY: the env of this call.
            unsafe { JsError::from(err).throw_into(env) };
            ptr::null_mut()
        }
    }
}

/// Releases a hot function's data when the function is collected.
unsafe extern "C" fn finalize<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box `function` leaked for this function; this runs once.
    drop(unsafe { Box::from_raw(data.cast::<T>()) });
}

/// An N-API status as a result.
fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(napi::Status::from(status), "N-API call failed".to_owned()))
    }
}
