"""The batch methods (route_many, node_many, node_index_many, route_packed; and
group_by_node and same_slot, which take the same batches) against the single calls,
over the keys of every route case of every vector file and every topology of that
file, in every key form and through every input kind (lists, generators, numpy arrays,
array.array, memoryview, packed bytes + offsets); their errors; and the package without
numpy.
"""

from __future__ import annotations

import array
import json
import subprocess
import sys
import threading
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import shardroute
from shardroute import InvalidArgumentError, InvalidKeyError, Router, ShardrouteError
from shardroute_testing import doc, vector_files, vector_key

#: Batches of at least this many keys release the GIL (DETACH_MIN_KEYS in src/arrays.rs);
#: key sets are repeated past it so both paths run.
LARGE = 1024
#: The vector files with route cases, parsed.
ROUTE_FILES = [(path, file) for path, file in vector_files() if any(case["op"] == "route" for case in file["cases"])]


def topologies(file: Dict[str, Any]) -> List[Tuple[str, Router, List[shardroute.Key]]]:
    """Every topology of a file that builds a router, each with all the file's route keys."""
    keys: List[shardroute.Key] = []
    for case in file["cases"]:
        if case["op"] == "route":
            keys.append(vector_key(case["key"]))
    # Every key form of the same text: str, bytes, bytearray, memoryview.
    for key in list(keys):
        if isinstance(key, str):
            try:
                utf8 = key.encode("utf-8")
            except UnicodeEncodeError:
                continue  # a lone surrogate: no byte form
            keys += [utf8, bytearray(utf8), memoryview(utf8)]
    built = []
    for topology_id, document in file["topologies"].items():
        try:
            built.append((topology_id, Router(document), keys))
        except ShardrouteError:
            continue  # a topology the file uses to test load errors
    return built


CASES = [
    pytest.param(router, keys, id=f"{path.stem}/{topology_id}")
    for path, file in ROUTE_FILES
    for topology_id, router, keys in topologies(file)
]


def outcome(call: Callable[[], Any]) -> Any:
    """The result of a call, or its error code."""
    try:
        return call()
    except ShardrouteError as err:
        return ("error", err.code)


def batch_methods(router: Router) -> List[Callable[[Any], Any]]:
    """Every method that takes a batch of keys as route_many does."""
    return [router.route_many, router.node_many, router.node_index_many, router.group_by_node, router.same_slot]


def grouped(router: Router, nodes: List[str]) -> List[Tuple[str, List[int]]]:
    """What group_by_node gives for keys owned by `nodes` (in key order), done the slow way:
    each node of the topology, in document order, with the positions of its keys."""
    ids = [node["id"] for node in json.loads(router.to_json())["nodes"]]
    groups = [(node, [index for index, owner in enumerate(nodes) if owner == node]) for node in ids]
    return [(node, indices) for node, indices in groups if indices]


def test_every_route_file_has_topologies() -> None:
    assert len(ROUTE_FILES) >= 20
    assert len(CASES) >= 60


@pytest.mark.parametrize("router, keys", CASES)
def test_batches_equal_single_calls(router: Router, keys: List[shardroute.Key]) -> None:
    singles = [(key, outcome(lambda: router.route(key))) for key in keys]
    good = [key for key, result in singles if not isinstance(result, tuple)]
    shards = [router.route(key) for key in good]
    nodes = [router.node(key) for key in good]
    ids = json.loads(router.to_json())["nodes"]
    for batch in (good, tuple(good), good * (LARGE // max(len(good), 1) + 1)):
        count = len(batch)
        repeat = count // max(len(good), 1)
        assert router.route_many(batch) == (shards * repeat)[:count]
        assert router.route_many(iter(batch)) == (shards * repeat)[:count]
        assert router.node_many(batch) == (nodes * repeat)[:count]
        indices = router.node_index_many(batch)
        assert [ids[index]["id"] for index in indices] == (nodes * repeat)[:count]
        assert router.group_by_node(batch) == grouped(router, (nodes * repeat)[:count])
    # A key the single call rejects fails the batch with the same code, wherever it is.
    for key, result in singles:
        if isinstance(result, tuple):
            for method in (router.route_many, router.node_many, router.node_index_many, router.group_by_node):
                assert outcome(lambda: method([*good[:3], key, *good[3:]])) == result


@pytest.mark.parametrize("router, keys", CASES)
def test_integer_arrays_equal_single_calls(router: Router, keys: List[shardroute.Key]) -> None:
    ints = [key for key in keys if type(key) is int and 0 <= key < 2**64]
    ints += [0, 1, 2**63, 2**64 - 1] + list(range(1000, 1000 + LARGE))
    failing = [(key, outcome(lambda: router.route(key))) for key in ints]
    failing = [(key, result) for key, result in failing if isinstance(result, tuple)]
    for key, result in failing[:20]:  # a key the strategy refuses: the same code
        arr = np.array([0, key, 1], dtype=np.uint64)
        for method in (router.route_many, router.node_many, router.node_index_many, router.group_by_node):
            assert outcome(lambda: method(arr)) == result
    ints = [key for key in ints if key not in {key for key, _ in failing}]
    expected = [router.route(key) for key in ints]
    nodes = [router.node(key) for key in ints]
    indices = [router.node_index_many([key])[0] for key in ints]
    keys_u64 = np.array(ints, dtype=np.uint64)
    for arr in (keys_u64, keys_u64[:10], keys_u64[:0]):
        n = len(arr)
        got = router.route_many(arr)
        assert isinstance(got, np.ndarray) and got.dtype == np.uint32 and got.shape == (n,)
        assert got.tolist() == expected[:n]
        got_indices = router.node_index_many(arr)
        assert isinstance(got_indices, np.ndarray) and got_indices.dtype == np.uint32
        assert got_indices.tolist() == indices[:n]
        assert router.node_many(arr) == nodes[:n]
        assert router.group_by_node(arr) == grouped(router, nodes[:n])
    if ints:
        assert router.same_slot(keys_u64[:1]) == expected[0]
        assert router.same_slot(np.array([ints[0]] * 3, dtype=np.uint64)) == expected[0]
    # Buffers that are not numpy: array.array("Q") and its memoryview, copied, give lists.
    packed = array.array("Q", ints)
    assert router.route_many(packed) == expected
    assert router.route_many(memoryview(packed)) == expected
    assert router.node_many(memoryview(packed)) == nodes
    assert router.group_by_node(memoryview(packed)) == grouped(router, nodes)
    # A read-only array, a slice (contiguous), and an unaligned one (read by copy).
    readonly = np.frombuffer(keys_u64.tobytes(), dtype=np.uint64)
    assert router.route_many(readonly).tolist() == expected
    assert router.route_many(keys_u64[5:]).tolist() == expected[5:]
    unaligned = np.frombuffer(b"\0" + keys_u64.tobytes(), dtype=np.uint64, offset=1)
    assert unaligned.ctypes.data % 8 != 0
    assert router.route_many(unaligned).tolist() == expected


@pytest.mark.parametrize("router, keys", CASES)
def test_packed_keys_equal_single_calls(router: Router, keys: List[shardroute.Key]) -> None:
    byte_keys = [bytes(key) for key in keys if isinstance(key, (bytes, bytearray, memoryview))]
    refused = [key for key in byte_keys if isinstance(outcome(lambda: router.route(key)), tuple)]
    for key in refused[:20]:
        assert outcome(lambda: router.route_packed(key, [0, len(key)])) == outcome(lambda: router.route(key))
    byte_keys = [key for key in byte_keys if key not in refused]
    byte_keys = (byte_keys * (LARGE // max(len(byte_keys), 1) + 1))[: LARGE + 7]
    expected = [router.route(key) for key in byte_keys]
    data = b"".join(byte_keys)
    offsets = [0]
    for key in byte_keys:
        offsets.append(offsets[-1] + len(key))
    assert router.route_packed(data, offsets) == expected
    assert router.route_packed(bytearray(data), iter(offsets)) == expected
    assert router.route_packed(memoryview(data), array.array("I", offsets)) == expected
    for dtype in (np.uint32, np.int32, np.int64, np.uint64):
        got = router.route_packed(data, np.array(offsets, dtype=dtype))
        assert isinstance(got, np.ndarray) and got.dtype == np.uint32
        assert got.tolist() == expected
    got = router.route_packed(np.frombuffer(data, dtype=np.uint8), offsets)
    assert isinstance(got, np.ndarray) and got.tolist() == expected
    assert router.route_packed(data, [0]) == []
    assert outcome(lambda: router.route_packed(b"", [0, 0])) == outcome(lambda: [router.route(b"")])


JUMP = doc(["a", "b", "c"], "jump")


@pytest.fixture
def router() -> Router:
    return Router(JUMP)


@pytest.mark.parametrize(
    "keys",
    [
        np.arange(4, dtype=np.int64),
        np.arange(4, dtype=np.uint32),
        np.arange(4, dtype=np.float64),
        np.array(["a", "b"]),
        np.array([1, 2], dtype=object),
        np.arange(4, dtype=np.uint64).reshape(2, 2),
        np.array(5, dtype=np.uint64),
        np.arange(4, dtype=np.uint64).astype(">u8"),
        np.arange(8, dtype=np.uint64)[::2],
        array.array("q", [1, 2]),
        array.array("I", [1, 2]),
        memoryview(array.array("Q", [1, 2, 3, 4])).cast("B").cast("Q", (2, 2)),
    ],
    ids=lambda keys: f"{type(keys).__name__}:{getattr(keys, 'dtype', getattr(keys, 'format', ''))}",
)
def test_bad_arrays_are_invalid_argument(router: Router, keys: Any) -> None:
    for method in batch_methods(router):
        with pytest.raises(InvalidArgumentError) as err:
            method(keys)
        assert err.value.code == "invalid_argument"


def test_bad_array_messages(router: Router) -> None:
    with pytest.raises(InvalidArgumentError, match="dtype is int64; expected uint64"):
        router.route_many(np.arange(3))
    with pytest.raises(InvalidArgumentError, match="not contiguous"):
        router.route_many(np.arange(8, dtype=np.uint64)[::2])


@pytest.mark.parametrize(
    "data, offsets",
    [
        (b"abc", []),
        (b"abc", [2, 1]),
        (b"abc", [0, 4]),
        (b"abc", [0, -1]),
        (b"abc", np.array([0, -1], dtype=np.int64)),
        (b"abc", np.array([0, 2**32], dtype=np.int64)),
        (b"abc", np.array([0.0, 1.0])),
        (b"abc", np.array([0, 1, 2, 3], dtype=np.uint32)[::2]),
        (b"abc", None),
        (b"abc", [0, "1"]),
        ("abc", [0, 3]),
        (None, [0]),
        (np.arange(3, dtype=np.uint16), [0, 1]),
    ],
)
def test_bad_packed_keys_are_invalid_argument(router: Router, data: Any, offsets: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        router.route_packed(data, offsets)


def test_single_keys_are_not_batches(router: Router) -> None:
    for keys in ("abc", b"abc", bytearray(b"abc"), memoryview(b"abc")):
        for method in batch_methods(router):
            with pytest.raises(InvalidArgumentError, match="single str or bytes key"):
                method(keys)


@pytest.mark.parametrize("bad", [None, -1, 2**64, True, 1.5, "\ud800", np.uint64(3)])
def test_invalid_keys_have_the_single_call_code(router: Router, bad: Any) -> None:
    single = outcome(lambda: router.route(bad))
    assert single == ("error", "invalid_key")
    for method in batch_methods(router):
        with pytest.raises(InvalidKeyError):
            method(["fine", bad])
        with pytest.raises(InvalidKeyError):
            method(["fine"] * (LARGE + 5) + [bad])


def test_large_batches_from_threads(router: Router) -> None:
    # Batches over arrays release the GIL: threads routing at once all get the answers.
    keys = np.arange(200_000, dtype=np.uint64)
    expected = router.route_many(keys)
    results: List[npt.NDArray[np.uint32]] = []

    def work() -> None:
        results.append(router.route_many(keys))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    for result in results:
        assert np.array_equal(result, expected)


NO_NUMPY = """
import array, sys

class BlockNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("numpy is blocked for this test")
        return None

sys.meta_path.insert(0, BlockNumpy())
import shardroute

router = shardroute.Router(sys.argv[1])
keys = ["user:1", b"user:2", 3]
assert router.route_many(keys) == [router.route(key) for key in keys]
assert router.node_many(keys) == [router.node(key) for key in keys]
assert sorted(i for _, indices in router.group_by_node(keys) for i in indices) == [0, 1, 2]
assert router.route_many(array.array("Q", [1, 2])) == [router.route(1), router.route(2)]
assert router.route_packed(b"ab", [0, 1, 2]) == [router.route(b"a"), router.route(b"b")]
assert "numpy" not in sys.modules
print("ok")
"""


def test_package_works_without_numpy() -> None:
    done = subprocess.run([sys.executable, "-c", NO_NUMPY, json.dumps(JUMP)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
