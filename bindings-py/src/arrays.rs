//! Arrays of keys and of results: numpy arrays and buffer-protocol objects converted to
//! the slices core's batch entry points take, and results back to `list` or numpy.
//!
//! The wheel is abi3 for CPython >= 3.10, where the buffer protocol (`PyObject_GetBuffer`,
//! pyo3's `PyBuffer`) is not in the stable ABI (it is from 3.11). So:
//!
//! * an object with `__array_interface__` (numpy, and libraries that speak its protocol)
//!   is read **in place**: the interface gives the data pointer, type, shape and strides;
//!   the array must be 1-D and C-contiguous, of the exact item type asked for, and the
//!   object is held for as long as the slice is used;
//! * any other buffer (a `memoryview`, `array.array`) is read through `memoryview`, and
//!   its bytes copied once (`memoryview.tobytes()`);
//! * results for numpy inputs are numpy arrays (`numpy.frombuffer` over a `bytearray`
//!   holding the results: one copy of 4 bytes per key), `list`s otherwise.
//!
//! numpy is never imported unless the caller passed an object with `__array_interface__`.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyTuple};
use shardroute as sr;

use crate::errors;
use crate::key::type_name;

/// From this many keys on, a batch over an array releases the GIL while core routes it.
pub const DETACH_MIN_KEYS: usize = 1024;

/// A machine integer type an array may hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Item {
    U8,
    I32,
    U32,
    I64,
    U64,
}

impl Item {
    fn size(self) -> usize {
        match self {
            Item::U8 => 1,
            Item::I32 | Item::U32 => 4,
            Item::I64 | Item::U64 => 8,
        }
    }

    fn numpy_name(self) -> &'static str {
        match self {
            Item::U8 => "uint8",
            Item::I32 => "int32",
            Item::U32 => "uint32",
            Item::I64 => "int64",
            Item::U64 => "uint64",
        }
    }

    /// From an `__array_interface__` type string (`"<u8"`), native byte order only.
    fn from_typestr(typestr: &str) -> Option<Item> {
        let native = if cfg!(target_endian = "little") { '<' } else { '>' };
        let mut chars = typestr.chars();
        let order = chars.next()?;
        let rest = chars.as_str();
        if rest == "u1" && (order == '|' || order == '<' || order == '>') {
            return Some(Item::U8);
        }
        if order != native && order != '=' {
            return None;
        }
        match rest {
            "i4" => Some(Item::I32),
            "u4" => Some(Item::U32),
            "i8" => Some(Item::I64),
            "u8" => Some(Item::U64),
            _ => None,
        }
    }

    /// From a `memoryview.format` struct code (native order and sizes) and item size.
    fn from_format(format: &str, itemsize: usize) -> Option<Item> {
        let code = format.strip_prefix('@').or_else(|| format.strip_prefix('=')).unwrap_or(format);
        let item = match code {
            "B" => Item::U8,
            "i" | "l" | "q" | "n" => {
                if itemsize == 4 {
                    Item::I32
                } else {
                    Item::I64
                }
            }
            "I" | "L" | "Q" | "N" => {
                if itemsize == 4 {
                    Item::U32
                } else {
                    Item::U64
                }
            }
            _ => return None,
        };
        (item.size() == itemsize).then_some(item)
    }
}

/// The items of an array argument: borrowed from a numpy array, or copied.
pub struct Array<'py> {
    /// Whether the argument was a numpy-style array (results then are numpy arrays).
    pub numpy: bool,
    pub item: Item,
    data: Data<'py>,
}

enum Data<'py> {
    /// Aligned, C-contiguous items of `owner`, which is held so they stay alive.
    Borrowed { _owner: Bound<'py, PyAny>, pointer: *const u8, len: usize },
    /// A copy of the bytes.
    Copied(Vec<u8>),
}

impl Array<'_> {
    /// The raw bytes of the items.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            // SAFETY: the pointer and byte length come from the array interface of
            // `_owner`, which this value holds. (A caller that mutates the array from
            // another thread while it is read races, as with numpy's own ufuncs.)
            Data::Borrowed { pointer, len, .. } => unsafe { std::slice::from_raw_parts(*pointer, *len) },
            Data::Copied(bytes) => bytes,
        }
    }

    /// The items as `u64`s: borrowed when they are `u64`s in aligned memory.
    pub fn u64s(&self) -> std::borrow::Cow<'_, [u64]> {
        typed(self.bytes(), u64::from_ne_bytes)
    }

    /// The items as `u32`s (`u32`: borrowed when aligned; others: converted, each
    /// checked to fit).
    ///
    /// # Errors
    /// `invalid_argument` naming `what` for a negative item or one above `u32::MAX`.
    pub fn u32s(&self, what: &str) -> PyResult<std::borrow::Cow<'_, [u32]>> {
        let bytes = self.bytes();
        let too_big =
            |index: usize| errors::new(sr::ErrorKind::InvalidArgument, format!("{what}[{index}] is not in 0..2**32"));
        let convert = |values: Vec<i128>| -> PyResult<Vec<u32>> {
            values
                .into_iter()
                .enumerate()
                .map(|(index, value)| u32::try_from(value).map_err(|_| too_big(index)))
                .collect()
        };
        Ok(match self.item {
            Item::U32 => typed(bytes, u32::from_ne_bytes),
            Item::U8 => bytes.iter().map(|&byte| u32::from(byte)).collect::<Vec<_>>().into(),
            Item::I32 => convert(typed(bytes, i32::from_ne_bytes).iter().map(|&v| i128::from(v)).collect())?.into(),
            Item::I64 => convert(typed(bytes, i64::from_ne_bytes).iter().map(|&v| i128::from(v)).collect())?.into(),
            Item::U64 => convert(typed(bytes, u64::from_ne_bytes).iter().map(|&v| i128::from(v)).collect())?.into(),
        })
    }
}

/// `bytes` as items of `T`: borrowed when the memory is aligned for `T`, else decoded.
fn typed<T: Copy + FromBytes, const N: usize>(bytes: &[u8], decode: fn([u8; N]) -> T) -> std::borrow::Cow<'_, [T]> {
    // SAFETY: `T` is a plain integer type (any bit pattern is valid); `align_to` only
    // yields the aligned middle part, used only when it covers all of `bytes`.
    let (head, middle, tail) = unsafe { bytes.align_to::<T>() };
    if head.is_empty() && tail.is_empty() {
        return middle.into();
    }
    bytes.chunks_exact(N).map(|chunk| decode(chunk.try_into().expect("chunks of N bytes"))).collect::<Vec<T>>().into()
}

/// Plain integer types whose every bit pattern is a value.
trait FromBytes {}
impl FromBytes for u32 {}
impl FromBytes for i32 {}
impl FromBytes for i64 {}
impl FromBytes for u64 {}

/// An array argument, if `value` is one: an object with `__array_interface__`, or a
/// buffer that `memoryview()` accepts (other than a byte string, which the callers
/// treat as a single key or as packed data themselves). `None` for anything else (a
/// list, a generator...). `expected` lists the item types the caller accepts.
///
/// # Errors
/// `invalid_argument` naming `what` when the array has another item type, is not 1-D
/// or is not C-contiguous.
pub fn array_from_py<'py>(value: &Bound<'py, PyAny>, what: &str, expected: &[Item]) -> PyResult<Option<Array<'py>>> {
    let py = value.py();
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return Ok(None);
    }
    if let Ok(interface) = value.getattr(intern!(py, "__array_interface__")) {
        if let Some(array) = from_array_interface(value, &interface, what, expected)? {
            return Ok(Some(array));
        }
    }
    let view = match value.cast::<PyMemoryView>() {
        Ok(view) => view.clone(),
        Err(_) => match py.get_type::<PyMemoryView>().call1((value,)) {
            Ok(view) => view.cast_into::<PyMemoryView>()?,
            Err(_) => return Ok(None),
        },
    };
    from_memoryview(value, &view, what, expected).map(Some).map_err(|err| {
        // A released memoryview's attributes raise a bare ValueError.
        if err.get_type(py).is(py.get_type::<pyo3::exceptions::PyValueError>()) {
            errors::convert(py, err, sr::ErrorKind::InvalidArgument, what)
        } else {
            err
        }
    })
}

fn bad_array(what: &str, problem: String) -> PyErr {
    errors::new(sr::ErrorKind::InvalidArgument, format!("{what}: {problem}"))
}

fn expected_names(expected: &[Item]) -> String {
    expected.iter().map(|item| item.numpy_name()).collect::<Vec<_>>().join(" or ")
}

/// Reads a numpy-style array in place; `None` when the interface does not give a data
/// pointer (the `data` entry may be a buffer object: read through `memoryview` then).
fn from_array_interface<'py>(
    value: &Bound<'py, PyAny>,
    interface: &Bound<'py, PyAny>,
    what: &str,
    expected: &[Item],
) -> PyResult<Option<Array<'py>>> {
    let py = value.py();
    let interface =
        interface.cast::<PyDict>().map_err(|_| bad_array(what, "__array_interface__ is not a dict".into()))?;
    let field = |name: &Bound<'py, pyo3::types::PyString>| -> PyResult<Bound<'py, PyAny>> {
        interface.get_item(name)?.ok_or_else(|| bad_array(what, format!("__array_interface__ has no {name}")))
    };
    let typestr: String = field(intern!(py, "typestr"))?.extract()?;
    let item = Item::from_typestr(&typestr).filter(|item| expected.contains(item)).ok_or_else(|| {
        let dtype = value.getattr("dtype").map_or(typestr.clone(), |dtype| dtype.to_string());
        bad_array(
            what,
            format!(
                "the array's dtype is {dtype}; expected {} in native byte order (convert with .astype(numpy.{}))",
                expected_names(expected),
                expected[0].numpy_name()
            ),
        )
    })?;
    let shape: Vec<usize> = field(intern!(py, "shape"))?.extract()?;
    let [len] = shape[..] else {
        return Err(bad_array(what, format!("the array has {} dimensions; expected 1", shape.len())));
    };
    let strides = interface.get_item(intern!(py, "strides"))?;
    if let Some(strides) = strides.filter(|strides| !strides.is_none()) {
        let strides: Vec<isize> = strides.extract()?;
        if len > 1 && strides != [item.size() as isize] {
            return Err(bad_array(
                what,
                "the array is not contiguous (a strided view); pass numpy.ascontiguousarray(array)".into(),
            ));
        }
    }
    let Ok(data) = field(intern!(py, "data"))?.cast_into::<PyTuple>() else {
        return Ok(None);
    };
    let pointer: usize = data.get_item(0)?.extract()?;
    let bytes = len * item.size();
    let data = if bytes == 0 {
        Data::Copied(Vec::new())
    } else {
        Data::Borrowed { _owner: value.clone(), pointer: pointer as *const u8, len: bytes }
    };
    Ok(Some(Array { numpy: true, item, data }))
}

/// Copies the items of a buffer through `memoryview`.
fn from_memoryview<'py>(
    value: &Bound<'py, PyAny>,
    view: &Bound<'py, PyMemoryView>,
    what: &str,
    expected: &[Item],
) -> PyResult<Array<'py>> {
    let py = value.py();
    let format: String = view.getattr(intern!(py, "format"))?.extract()?;
    let itemsize: usize = view.getattr(intern!(py, "itemsize"))?.extract()?;
    let item = Item::from_format(&format, itemsize).filter(|item| expected.contains(item)).ok_or_else(|| {
        bad_array(
            what,
            format!(
                "a {} buffer of format {format:?} ({itemsize}-byte items); expected {} items",
                type_name(value),
                expected_names(expected)
            ),
        )
    })?;
    let ndim: usize = view.getattr(intern!(py, "ndim"))?.extract()?;
    if ndim != 1 {
        return Err(bad_array(what, format!("the buffer has {ndim} dimensions; expected 1")));
    }
    if !view.getattr(intern!(py, "c_contiguous"))?.is_truthy()? {
        return Err(bad_array(what, "the buffer is not contiguous (a strided view)".into()));
    }
    let bytes = view.call_method0(intern!(py, "tobytes"))?.cast_into::<PyBytes>()?;
    Ok(Array { numpy: false, item, data: Data::Copied(bytes.as_bytes().to_vec()) })
}

/// Results as Python: a numpy `uint32` array when `numpy`, else a `list` of ints.
pub fn u32s_to_py<'py>(py: Python<'py>, values: &[u32], numpy: bool) -> PyResult<Bound<'py, PyAny>> {
    if numpy {
        let buffer = PyByteArray::new_with(py, values.len() * 4, |buffer| {
            for (chunk, value) in buffer.chunks_exact_mut(4).zip(values) {
                chunk.copy_from_slice(&value.to_ne_bytes());
            }
            Ok(())
        })?;
        let numpy = py.import(intern!(py, "numpy"))?;
        let dtype = numpy.getattr(intern!(py, "uint32"))?;
        return numpy.call_method1(intern!(py, "frombuffer"), (buffer, dtype));
    }
    // Results repeat (a shard or node number per key): one int object per distinct
    // value, shared, instead of one allocated per key.
    let distinct = values.iter().max().map_or(0, |&max| max as usize + 1);
    if distinct > SHARED_INTS_MAX || distinct > values.len() {
        return Ok(PyList::new(py, values)?.into_any());
    }
    // Every value up to the largest, made up front (there are no more of them than
    // keys), so the list is filled straight from `values`: no intermediate vector of
    // objects, whose fresh pages cost as much as the rest of the conversion.
    let ints: Vec<Bound<'py, PyAny>> =
        (0..distinct as u32).map(|value| Ok(value.into_pyobject(py)?.into_any())).collect::<PyResult<_>>()?;
    Ok(PyList::new(py, values.iter().map(|&value| &ints[value as usize]))?.into_any())
}

/// Up to this many distinct result values, [`u32s_to_py`] shares int objects.
const SHARED_INTS_MAX: usize = 1 << 17;
