//! [`sr::Location`] (`Router.locate`'s answer) as Python data.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardroute as sr;

/// A location as the `Location` dict: `{"shard", "node", "address", "zone", "names"}`,
/// the shape of [`sr::Location::to_value`], with `None` for an absent address or zone
/// and the rendered names in name order.
pub fn location_to_py<'py>(py: Python<'py>, location: &sr::Location<'_>) -> PyResult<Bound<'py, PyDict>> {
    let names = PyDict::new(py);
    for (name, value) in &location.names {
        names.set_item(name, value)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("shard", location.shard)?;
    dict.set_item("node", location.node)?;
    dict.set_item("address", location.address)?;
    dict.set_item("zone", location.zone)?;
    dict.set_item("names", names)?;
    Ok(dict)
}
