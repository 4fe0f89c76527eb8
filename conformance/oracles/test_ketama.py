"""Oracle test of the `ketama` profile against the real implementations.

- variant `libmemcached`: Debian's libmemcached (package libmemcached-dev, 1.1.4) through
  the C harness `ketama_libmemcached.c`, compiled here with gcc: `memcached_generate_hash`
  under `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` for every key, and every continuum point
  probed exactly (a custom hashkit function makes the key's hash any chosen u32).
- variant `libketama`: PyPI `ketama` 0.1.1, which compiles last.fm's `ketama.c`; its
  `get_points()` is compared with shardroute's continuum point by point.
- PyPI `uhashring` 2.5 (`hash_fn="ketama"`): agrees where its rules coincide and its
  documented differences are asserted (see docs/compatibility.md).

A missing oracle fails the test with the install command; nothing is skipped.
Run: .venv/bin/python -m pytest conformance/oracles/test_ketama.py
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import tempfile

import ketama
import pytest
import uhashring

import shardroute
from oracle_keys import assert_agree, byte_keys, integer_keys, key_bytes, text_keys
from shardroute_testing import VECTORS, doc, vector_key

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS_SOURCE = os.path.join(HERE, "ketama_libmemcached.c")
#: Long key lengths: MD5's padding and block edges (55/56, 63-65, 119/120), memcached's
#: 250-byte key limit, and beyond.
MEMCACHED_LENGTHS = (55, 56, 63, 64, 65, 119, 120, 249, 250, 251, 1000, 4096, 65537)


@pytest.fixture(scope="session")
def harness(tmp_path_factory) -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is required to build the libmemcached oracle harness (apt-get install gcc)", pytrace=False)
    binary = str(tmp_path_factory.mktemp("ketama") / "ketama_libmemcached")
    build = subprocess.run(
        [gcc, "-O2", "-o", binary, HARNESS_SOURCE, "-lmemcached", "-lhashkit"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if build.returncode != 0:
        pytest.fail(
            "cannot build the libmemcached oracle harness; install Debian's libmemcached-dev "
            f"(apt-get install libmemcached-dev):\n{build.stderr}",
            pytrace=False,
        )
    return binary


def run_harness(binary: str, servers: list[tuple[str, int, int]], lines: list[str], mode: str) -> list[int]:
    args = [binary, "weighted", mode] + [f"{host}:{port}:{weight}" for host, port, weight in servers]
    result = subprocess.run(args, input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = [int(value) for value in result.stdout.split()]
    assert len(out) == len(lines)
    return out


def router(variant: str, servers: list) -> shardroute.Router:
    """A ketama router over `(host, port, weight)` or `(address, weight)` servers."""
    nodes = []
    for index, server in enumerate(servers):
        address, weight = (f"{server[0]}:{server[1]}", server[2]) if len(server) == 3 else server
        nodes.append({"id": f"s{index}", "address": address, "weight": weight})
    return shardroute.Router(doc(nodes, {"type": "ketama", "variant": variant}))


def all_byte_keys() -> list[bytes]:
    """Byte keys of every length to 64 and around memcached's limit, and the shared text
    and integer keys as the bytes a memcached client sends."""
    keys = byte_keys(per_length=60, long_lengths=MEMCACHED_LENGTHS, extra=1000)
    return keys + [key_bytes(key) for key in [*text_keys(), *integer_keys()]]


def md5_u32(data: bytes, part: int = 0) -> int:
    return struct.unpack_from("<I", hashlib.md5(data).digest(), 4 * part)[0]


def libmemcached_continuum(servers: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """shardroute's rule written out independently (float32 via struct), for probing."""

    def f32(x: float) -> float:
        return struct.unpack("f", struct.pack("f", x))[0]

    total = sum(weight for _, _, weight in servers)
    points = []
    for index, (host, port, weight) in enumerate(servers):
        pct = f32(f32(weight) / f32(total))
        digests = int(f32(f32(f32(pct * 160) / 4) * f32(len(servers))))
        label = host if port == 11211 else f"{host}:{port}"
        for k in range(digests):
            for part in range(4):
                points.append((md5_u32(f"{label}-{k}".encode(), part), index))
    return sorted(points)


CONFIGS = {
    "three-equal-default-port": [("10.0.0.1", 11211, 1), ("10.0.0.2", 11211, 1), ("10.0.0.3", 11211, 1)],
    "mixed-ports-weights": [("cache-a", 11211, 100), ("cache-b", 11212, 300), ("10.1.2.3", 22122, 7), ("cache-c", 1, 1)],
    "twenty-five-equal": [(f"10.0.0.{i}", 11211, 1) for i in range(25)],
    "fifty-equal": [(f"mc{i}.example.com", 11211 + (i % 3), 1) for i in range(50)],
    "sixty-one-weighted": [(f"h{i}", 11211, 1 + (i * 7919) % 1000) for i in range(61)],
    "single": [("only", 11211, 5)],
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_libmemcached_routes_every_key_alike(harness: str, name: str) -> None:
    servers = CONFIGS[name]
    keys = all_byte_keys()
    assert len(keys) >= 10_000
    expected = run_harness(harness, servers, [key.hex() for key in keys], "keys")
    assert_agree(keys, expected, router("libmemcached", servers).route_many(keys))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_libmemcached_continuum_points_exactly(harness: str, name: str) -> None:
    """Probes libmemcached at every point p and at p - 1, p + 1 of our continuum:
    equal answers at all of them mean the same points, owners and tie order."""
    servers = CONFIGS[name]
    continuum = libmemcached_continuum(servers)
    probes = sorted({value for point, _ in continuum for value in (point - 1, point, point + 1) if 0 <= value < 2**32})
    probes += [0, 2**32 - 1]
    expected = run_harness(harness, servers, [str(value) for value in probes], "hashes")
    values = [point for point, _ in continuum]
    for probe, owner in zip(probes, expected):
        index = bisect.bisect_left(values, probe)
        mine = continuum[index if index < len(continuum) else 0][1]
        assert mine == owner, f"hash {probe}: libmemcached says server {owner}, the rule {mine}"
    # And the rule written out here is shardroute's: route the integer keys through both.
    keys = [str(value).encode() for value in integer_keys()]
    hashes = [md5_u32(key) for key in keys]
    by_rule = []
    for value in hashes:
        index = bisect.bisect_left(values, value)
        by_rule.append(continuum[index if index < len(continuum) else 0][1])
    assert router("libmemcached", servers).route_many(keys) == by_rule


# Host pairs whose continuums share a 32-bit point (found by a birthday search over
# "mc<i>.example-<k>" labels): (point, first host, second host).
TIES = [
    (1040363822, "mc135.example", "mc238.example"),
    (3220412639, "mc40.example", "mc680.example"),
    (3272162314, "mc218.example", "mc821.example"),
]


@pytest.mark.parametrize("point,first,second", TIES)
def test_libmemcached_ties_go_to_the_lower_server_index(harness: str, point: int, first: str, second: str) -> None:
    for servers in ([(first, 11211, 1), (second, 11211, 1)], [(second, 11211, 1), (first, 11211, 1)]):
        continuum = libmemcached_continuum(servers)
        assert [index for value, index in continuum if value == point] == [0, 1]
        assert run_harness(harness, servers, [str(point)], "hashes") == [0]
        # shardroute: the key whose hash is the tie point is not known, so check the
        # continuum order the rule above fixes and that shardroute routes like it.
        keys = [f"probe-{i}".encode() for i in range(2000)]
        expected = run_harness(harness, servers, [key.hex() for key in keys], "keys")
        assert router("libmemcached", servers).route_many(keys) == expected


def test_integer_keys_route_as_their_decimal_text(harness: str) -> None:
    servers = CONFIGS["mixed-ports-weights"]
    ints = integer_keys()
    expected = run_harness(harness, servers, [str(value).encode().hex() for value in ints], "keys")
    assert router("libmemcached", servers).route_many(ints) == expected


def libketama_oracle(servers: list[tuple[str, int]]):
    # libketama caches the continuum in System V shared memory under ftok(file) and
    # reuses it while the file's mtime matches: keep every file alive for the session and
    # give it an mtime of its own, so no continuum is ever taken from another config.
    handle = tempfile.NamedTemporaryFile("w", suffix=".servers", delete=False, dir=KETAMA_DIR.name)
    with handle:
        for address, memory in servers:
            handle.write(f"{address}\t{memory}\n")
    stamp = random.randrange(10**8, 2 * 10**9)
    os.utime(handle.name, (stamp, stamp))
    return ketama.Ketama(handle.name)


KETAMA_DIR = tempfile.TemporaryDirectory(prefix="shardroute-ketama-")


LIBKETAMA_CONFIGS = {
    "three-equal": [("10.0.1.1:11211", 1), ("10.0.1.2:11211", 1), ("10.0.1.3:11211", 1)],
    "weighted-mb": [("10.0.1.1:11211", 900), ("10.0.1.2:11211", 300), ("10.0.1.3:11211", 1500), ("cache:1", 64)],
    "sixty-one-equal": [(f"10.0.2.{i}:11211", 1) for i in range(61)],
    "twenty-one-bytes": [("abcdefghijklmnop:1234", 1), ("255.255.255.255:6553", 3)],
}


@pytest.mark.parametrize("name", sorted(LIBKETAMA_CONFIGS))
def test_libketama_routes_every_key_and_point_alike(name: str) -> None:
    servers = LIBKETAMA_CONFIGS[name]
    oracle = libketama_oracle(servers)
    ours = router("libketama", servers)
    index = {address: i for i, (address, _) in enumerate(servers)}
    # Continuum points, compared directly.
    points = oracle.get_points()
    digests_by_server: dict[int, int] = {}
    for _, address in points:
        digests_by_server[index[address]] = digests_by_server.get(index[address], 0) + 1
    keys = all_byte_keys()
    assert len(keys) >= 10_000
    expected = [index[oracle.get_server(key)[1]] for key in keys]
    assert_agree(keys, expected, ours.route_many(keys))
    # Every point of the oracle's continuum, and its neighbours, route alike (the key
    # hash cannot be chosen through the oracle's API, so compare the points themselves).
    mine: list[tuple[int, int]] = []
    for i, (address, memory) in enumerate(servers):
        total = sum(m for _, m in servers)
        pct = struct.unpack("f", struct.pack("f", struct.unpack("f", struct.pack("f", memory))[0] / struct.unpack("f", struct.pack("f", total))[0]))[0]
        digests = int(struct.unpack("f", struct.pack("f", pct * 40.0 * len(servers)))[0])
        for k in range(digests):
            for part in range(4):
                mine.append((md5_u32(f"{address}-{k}".encode(), part), i))
    assert sorted(point for point, _ in points) == sorted(point for point, _ in mine)
    assert sorted((point, index[address]) for point, address in points) == sorted(mine)


def test_uhashring_agrees_on_text_keys_where_its_rules_coincide() -> None:
    servers = LIBKETAMA_CONFIGS["three-equal"]
    ring = uhashring.HashRing(nodes=[address for address, _ in servers], hash_fn="ketama")
    keys = text_keys() + [f"key-{i}" for i in range(7000)]
    assert len(keys) >= 10_000
    index = {address: i for i, (address, _) in enumerate(servers)}
    expected = [index[ring.get_node(key)] for key in keys]
    assert router("libketama", servers).route_many(keys) == expected


def test_uhashring_documented_differences() -> None:
    # 1. Integer weight maths: 61 equal servers get 40 digests in uhashring, 39 in libketama.
    servers = LIBKETAMA_CONFIGS["sixty-one-equal"]
    ring = uhashring.HashRing(nodes=[address for address, _ in servers], hash_fn="ketama")
    assert len(ring.get_points()) == 61 * 160
    assert len(libketama_oracle(servers).get_points()) == 61 * 156
    # 2. bytes keys are hashed as their repr: str(b"a") == "b'a'".
    ring = uhashring.HashRing(nodes=["a:1", "b:1", "c:1"], hash_fn="ketama")
    assert ring.hashi(b"abc") == md5_u32(b"b'abc'")
    # 3. Lookup is bisect_right: a key hashing exactly onto a point goes to the next one.
    position, node = ring.get_points()[5]
    assert ring._get_pos.__func__ is not None  # the method the lookup uses
    keys = ring.runtime._keys
    assert bisect.bisect(keys, position) == 6  # libketama answers point 5


def test_vector_route_cases_match_the_oracles(harness: str) -> None:
    """Every `route` case of ketama.json's libmemcached-* and libketama-* topologies,
    recomputed by the real implementation."""
    vectors = json.loads((VECTORS / "ketama.json").read_text(encoding="utf-8"))
    checked = 0
    oracles: dict[str, object] = {}  # one libketama continuum per topology
    for case in vectors["cases"]:
        if case["op"] != "route" or case["topology"].startswith("couchbase"):
            continue
        document = vectors["topologies"][case["topology"]]
        data = key_bytes(vector_key(case["key"]))
        nodes = document["nodes"]
        if document["strategy"].get("variant", "libmemcached") == "libmemcached":
            servers = []
            for node in nodes:
                host, port = node["address"].rsplit(":", 1)
                servers.append((host, int(port), int(node.get("weight", 1))))
            shard = run_harness(harness, servers, [data.hex()], "keys")[0]
        else:
            if case["topology"] not in oracles:
                oracles[case["topology"]] = libketama_oracle([(node["address"], int(node.get("weight", 1))) for node in nodes])
            oracle = oracles[case["topology"]]
            address = oracle.get_server(data)[1]
            shard = [node["address"] for node in nodes].index(address)
        assert case["expect"]["shard"] == shard, case["name"]
        checked += 1
    assert checked >= 4 * 37
