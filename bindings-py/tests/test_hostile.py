"""No crash across the FFI: every public call with hostile arguments.

The shared table conformance/hostile/calls.json (its format: conformance/README.md)
gives, for every public call of the package, arguments of the wrong type, None, huge and
negative integers, NaN, non-UTF-8 bytes, lone surrogates, empty and 100 MiB keys, arrays
of the wrong dtype, damaged binary dictionaries and older epochs, each with the error code
the call must raise (or none: the call must succeed). The Node addon and the WASM package
run the same table (conformance/js/hostile-suite.mjs) and must raise the same codes. A
test here fails if a public name of the stubs is missing from the table, so a new call
cannot be left out.

Below the table, what only Python has: numpy arrays that are strided, 2-D, byte-swapped
or of objects, released memoryviews, subclasses of the accepted types, iterators and
mappings that raise.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import shardroute
from shardroute import InvalidArgumentError, InvalidKeyError, InvalidTopologyError, Migration, Router, ShardrouteError
from shardroute_testing import doc

ROOT = Path(__file__).resolve().parents[2]
TABLE: dict[str, Any] = json.loads((ROOT / "conformance" / "hostile" / "calls.json").read_text(encoding="utf-8"))
STUBS = ROOT / "bindings-py" / "python" / "shardroute" / "__init__.pyi"
CODES = {cls.code for cls in ShardrouteError.__subclasses__()}

FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}


class Fixtures:
    """The table's routers, migrations and documents, built once."""

    def __init__(self) -> None:
        self.documents: dict[str, Any] = TABLE["fixtures"]
        self.routers = {name: Router(document) for name, document in self.documents.items()}
        self.migrations: dict[str, Migration] = {}
        for name, spec in TABLE["migrations"].items():
            if isinstance(spec, list):
                self.migrations[name] = Migration(self.routers[spec[0]], self.routers[spec[1]])
            else:
                self.migrations[name] = Migration.of_dictionary(self.routers[spec["of_dictionary"]])

    def value(self, written: Any) -> Any:
        """A table value as the Python value a user would pass (the tags are in
        conformance/README.md)."""
        if isinstance(written, list):
            return [self.value(item) for item in written]
        if not isinstance(written, dict):
            return written
        tags = [name for name in written if name.startswith("$")]
        if not tags:
            return {name: self.value(item) for name, item in written.items()}
        assert len(written) == 1, f"a tagged value has one field: {written!r}"
        ((tag, spec),) = written.items()
        if tag == "$float":
            return FLOATS[spec]
        if tag == "$int":
            return int(spec)
        if tag == "$bytes":
            return bytes.fromhex(spec)
        if tag == "$array":
            dtype, items = spec
            return np.array(items, dtype=dtype)
        if tag == "$repeat":
            unit = spec["text"] if "text" in spec else bytes.fromhex(spec["hex"])
            return unit * spec["times"]
        if tag == "$nest":
            nested = self.value(spec["leaf"])
            for _ in range(spec["depth"]):
                nested = [nested]
            return nested
        if tag == "$router":
            return self.routers[spec]
        if tag == "$migration":
            return self.migrations[spec]
        if tag == "$fixture":
            return json.loads(json.dumps(self.documents[spec]))
        if tag == "$dictionary":
            return dictionary_bytes(self.documents[spec["fixture"]], spec)
        raise AssertionError(f"unknown tag {tag!r}")


def dictionary_bytes(document: Any, spec: Mapping[str, Any]) -> bytes:
    """The binary dictionary of `document`, damaged as `spec` says: `keep` the first n
    bytes (negative: drop the last -n), flip the low bit of byte `flip_bit` (negative:
    from the end), `append` hex bytes."""
    data = bytearray(shardroute.encode_dictionary(document))
    if "keep" in spec:
        data = data[: spec["keep"]]
    if "flip_bit" in spec:
        data[spec["flip_bit"]] ^= 1
    if "append" in spec:
        data += bytes.fromhex(spec["append"])
    return bytes(data)


def substitute(args: Any, value: Any) -> Any:
    """`args` with every placeholder "$" replaced by `value`."""
    if isinstance(args, str) and args == "$":
        return value
    if isinstance(args, list):
        return [substitute(item, value) for item in args]
    if isinstance(args, dict) and not any(name.startswith("$") for name in args):
        return {name: substitute(item, value) for name, item in args.items()}
    return args


def cases() -> Iterator[Any]:
    """Every (group, call, value) of the table that Python runs, as pytest params."""
    for group in TABLE["groups"]:
        for index, call in enumerate(group["calls"]):
            if call.get("only", "py") != "py":
                continue
            for value in group["values"]:
                if value.get("only", "py") != "py":
                    continue
                code = call.get("expect", {}).get(value["id"], value["code"])
                name = f"{group['name']}/{call['call']}#{index}/{value['id']}"
                yield pytest.param(call, value, code, id=name)


@pytest.fixture(scope="module")
def fixtures() -> Fixtures:
    return Fixtures()


def invoke(fixtures: Fixtures, call: Mapping[str, Any], value: Any) -> Any:
    """Makes the call of a table entry with `value` (a Python value, not a table value:
    test_properties.py passes its own) in place of "$"."""
    args = substitute([fixtures.value(arg) for arg in call["args"]], value)
    owner, _, method = call["call"].rpartition(".")
    if owner in ("Router", "Migration") and "on" in call:
        target: Any = fixtures.routers[call["on"]] if owner == "Router" else fixtures.migrations[call["on"]]
        attribute = getattr(target, method)
        return attribute if call.get("get") else attribute(*args)
    if owner:
        return getattr(getattr(shardroute, owner), method)(*args)
    return getattr(shardroute, method)(*args)


@pytest.mark.parametrize(("call", "value", "code"), list(cases()))
def test_hostile_call(fixtures: Fixtures, call: Mapping[str, Any], value: Mapping[str, Any], code: str | None) -> None:
    if code is None:
        invoke(fixtures, call, fixtures.value(value["value"]))
        return
    with pytest.raises(ShardrouteError) as raised:
        invoke(fixtures, call, fixtures.value(value["value"]))
    assert raised.value.code == code, raised.value.message
    assert type(raised.value).code == code, "the class of the error is its code's"
    if "message_contains" in value:
        assert value["message_contains"] in raised.value.message


def test_every_public_call_is_in_the_table() -> None:
    """Every function and method the stubs declare (properties included) is called by a
    case Python runs: a new call without hostile cases fails here."""
    tree = ast.parse(STUBS.read_text(encoding="utf-8"))
    public = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            public.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name in ("Router", "Migration"):
            for member in node.body:
                if isinstance(member, ast.FunctionDef) and member.name == "__new__":
                    public.add(node.name)
                elif isinstance(member, ast.FunctionDef) and not member.name.startswith("__"):
                    public.add(f"{node.name}.{member.name}")
    covered = {param.values[0]["call"] for param in cases()}
    assert public - covered == set(), "public calls without hostile cases"
    assert covered - public == set(), "table calls the stubs do not declare"
    assert len(public) >= 40


def test_the_table_uses_only_known_codes() -> None:
    for group in TABLE["groups"]:
        for value in group["values"]:
            assert value["code"] is None or value["code"] in CODES, value
        for call in group["calls"]:
            assert set(call.get("expect", {})) <= {value["id"] for value in group["values"]}, call
            assert all(code is None or code in CODES for code in call.get("expect", {}).values())


# What only Python has.

RING = doc(["a", "b", "c"], {"type": "ring", "points_per_node": 40}, epoch=7)


@pytest.fixture(scope="module")
def ring() -> Router:
    return Router(RING)


@pytest.mark.parametrize(
    "keys",
    [
        np.arange(8, dtype=np.uint64)[::2],
        np.arange(8, dtype=np.uint64).reshape(2, 4),
        np.arange(4, dtype=">u8"),
        np.array(["a", "b"], dtype=object),
        np.array([1.5, 2.0]),
        np.zeros(0, dtype=np.int64),
        np.array([True, False]),
    ],
    ids=["strided", "2-D", "byte-swapped", "objects", "float64", "int64-empty", "bool"],
)
@pytest.mark.parametrize("call", ["route_many", "node_many", "node_index_many", "same_slot", "group_by_node"])
def test_numpy_arrays_of_other_shapes_and_dtypes(ring: Router, keys: Any, call: str) -> None:
    with pytest.raises(InvalidArgumentError):
        getattr(ring, call)(keys)


def test_numpy_arrays_for_diff_and_moving_keys(ring: Router) -> None:
    after = ring.replace(doc(["a", "b", "c", "d"], {"type": "ring", "points_per_node": 40}, epoch=8))
    keys = np.arange(16, dtype=np.uint64)
    assert shardroute.diff(ring, after, keys)["total"] == 16
    assert Migration(ring, after).moving_keys(keys) == Migration(ring, after).moving_keys(keys.tolist())
    for bad in (keys[::2], keys.astype(np.int32), keys.reshape(4, 4)):
        with pytest.raises(InvalidArgumentError):
            shardroute.diff(ring, after, bad)
        with pytest.raises(InvalidArgumentError):
            Migration(ring, after).moving_keys(bad)


def test_route_packed_with_strided_and_wrong_numpy_arrays(ring: Router) -> None:
    data = np.frombuffer(b"abcd", dtype=np.uint8)
    offsets = np.array([0, 1, 2, 3, 4], dtype=np.uint32)
    assert list(ring.route_packed(data, offsets)) == [ring.route(key) for key in "abcd"]
    bad_datas: list[Any] = [np.frombuffer(b"abcdefgh", dtype=np.uint8)[::2], data.astype(np.uint16), data.reshape(2, 2)]
    for bad_data in bad_datas:
        with pytest.raises(InvalidArgumentError):
            ring.route_packed(bad_data, offsets)
    for bad_offsets in (offsets[::2], offsets.astype(np.float32), np.array([0, -1], dtype=np.int64)):
        with pytest.raises(InvalidArgumentError):
            ring.route_packed(data, bad_offsets)


def test_released_memoryviews_are_refused(ring: Router) -> None:
    view = memoryview(b"key")
    view.release()
    with pytest.raises(InvalidKeyError):
        ring.route(view)
    packed = memoryview(shardroute.encode_dictionary(TABLE["fixtures"]["dictionary"]))
    packed.release()
    with pytest.raises(InvalidArgumentError):
        shardroute.decode_dictionary(packed)


class Text(str):
    pass


class Number(int):
    pass


def test_subclasses_of_key_types_are_their_base(ring: Router) -> None:
    assert ring.route(Text("a")) == ring.route("a")
    assert ring.route(Number(5)) == ring.route(5)
    with pytest.raises(InvalidKeyError):
        ring.route(Text("\ud800"))
    with pytest.raises(InvalidKeyError):
        ring.route(Number(-1))
    # bool is an int subclass, and never a key, a count or a hash.
    for call in (lambda: ring.route(True), lambda: shardroute.jump(False, 3), lambda: ring.replicas("k", True)):
        with pytest.raises(ShardrouteError):
            call()


def failing_keys(after: int) -> Iterator[str]:
    """Keys, then a ValueError from the iterator."""
    for index in range(after):
        yield f"k{index}"
    raise ValueError("the source of keys broke")


@pytest.mark.parametrize("call", ["route_many", "node_many", "node_index_many", "same_slot", "group_by_node"])
def test_an_iterator_that_raises_is_invalid_key_naming_the_index(ring: Router, call: str) -> None:
    with pytest.raises(InvalidKeyError) as raised:
        getattr(ring, call)(failing_keys(3))
    assert raised.value.message.startswith("keys[3]: cannot be read")
    assert isinstance(raised.value.__cause__, ValueError)
    after = ring.replace(doc(["a", "b"], "jump", epoch=9))
    with pytest.raises(InvalidKeyError):
        shardroute.diff(ring, after, failing_keys(1))


def test_keyboard_interrupt_in_an_iterator_propagates(ring: Router) -> None:
    def interrupted() -> Iterator[str]:
        yield "a"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ring.route_many(interrupted())


class Exploding(Mapping[str, Any]):
    """A mapping whose items raise."""

    def __getitem__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")

    def __iter__(self) -> Iterator[str]:
        return iter(["format"])

    def __len__(self) -> int:
        return 1


# Documents json.dumps cannot write (a raising mapping, a set, an int past the str limit,
# a non-text key, a complex number).
UNWRITABLE: list[Any] = [
    Exploding(),
    {**RING, "nodes": [{"id": "a", "weight": {1, 2}}]},
    {**RING, "epoch": 10**5000},
    {**RING, (1, 2): "tuple key"},
    {**RING, "nodes": [{"id": "a", "weight": 1 + 2j}]},
]


@pytest.mark.parametrize(
    "document",
    UNWRITABLE,
    ids=["raising-mapping", "set", "int-past-str-limit", "tuple-key", "complex"],
)
def test_documents_json_cannot_write_are_invalid_topology(document: Any) -> None:
    with pytest.raises(InvalidTopologyError):
        Router(document)
    with pytest.raises(InvalidArgumentError):
        shardroute.apply(RING, {"op": "add_node", "node": document})


def test_a_document_that_contains_itself_is_invalid_topology() -> None:
    cyclic: dict[str, Any] = dict(RING)
    cyclic["placement"] = cyclic
    with pytest.raises(InvalidTopologyError):
        Router(cyclic)  # type: ignore[arg-type]  # deliberately no Topology: it contains itself


def test_numbers_that_are_no_count(ring: Router) -> None:
    checks: list[Callable[[], Any]] = [
        lambda: ring.replicas("k", np.uint32(1)),  # type: ignore[arg-type]
        lambda: ring.replicas("k", 1.0),  # type: ignore[arg-type]
        lambda: ring.salted_key("k", 2**64),
        lambda: ring.shard_owner(-(2**70)),
        lambda: shardroute.modulo_moves(10**400, 2),
    ]
    for check in checks:
        with pytest.raises(InvalidArgumentError):
            check()
