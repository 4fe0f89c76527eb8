"""The `vitess` profile against independent implementations of its vindexes.

`hash`: DES (ECB, all-zero 8-byte key) from PyPI `pycryptodome` over the id's 8
big-endian bytes, and Vitess' own published values (go/vt/vtgate/vindexes/hash_test.go).
`xxhash`: XXH64 seed 0 from PyPI `xxhash` over the value's bytes (an integer as its
decimal text, as Vitess hashes an integer column's `sqltypes.Value`). `numeric`: the
id's big-endian bytes.

Keyspace ids are compared exactly through routing: in the "probe" keyspace every oracle
keyspace id `k` starts a shard `k-(k+1)` (8-byte hex names), so shardroute puts a key in
that shard only if it computes exactly the oracle's keyspace id. A second, realistic
keyspace (`-40`, `40-80`, uneven 2-byte boundaries) checks the keyrange rule against
Go's `bytes.Compare` semantics (start <= id < end), written out here.

Run: .venv/bin/python -m pytest conformance/oracles/test_vitess.py
"""

import bisect
import random
import struct

import pytest
import xxhash
from Crypto import __version__ as CRYPTO_VERSION
from Crypto.Cipher import DES

import shardroute
from shardroute_testing import doc

DES_ZERO = DES.new(bytes(8), DES.MODE_ECB)

# Vitess go/vt/vtgate/vindexes/hash_test.go (TestHashMap / TestHashReverseMap).
VITESS_HASH = {1: "166b40b44aba4bd6", 2: "06e7ea22ce92708f", 3: "4eb190c9a2fa169c", 4: "d2fd8867d50d2dfe", 5: "70bb023c810ca87a"}


def test_oracle_versions():
    assert CRYPTO_VERSION == "4.4.0", CRYPTO_VERSION
    assert xxhash.VERSION == "4.1.0", xxhash.VERSION


def oracle_ksid(vindex, key):
    """The keyspace id as 8 bytes, or None when Vitess cannot map the value."""
    if vindex == "xxhash":
        data = str(key).encode() if isinstance(key, int) else key.encode() if isinstance(key, str) else key
        return struct.pack(">Q", xxhash.xxh64_intdigest(data, seed=0))
    if isinstance(key, int):
        value = key
    else:
        text = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
        if not text or not text.isascii() or not text.isdigit() or int(text) >= 2**64:
            return None
        value = int(text)
    block = struct.pack(">Q", value)
    return DES_ZERO.encrypt(block) if vindex == "hash" else block


def keys(seed=11):
    rng = random.Random(seed)
    out = [0, 1, 2, 3, 4, 5, 255, 256, 2**32, 2**63 - 1, 2**63, 2**64 - 1, b"", "", "0", "1", "18446744073709551615"]
    out += [bytes([b]) for b in range(256)] + ["\u00e9", "\U0001f600", "a" * 5000]
    for i in range(14_000):
        kind = i % 4
        if kind == 0:
            out.append(rng.randrange(2**64))
        elif kind == 1:
            out.append(rng.randrange(10**6))
        elif kind == 2:
            out.append(str(rng.randrange(2**64)))
        else:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
    return out


KEYS = keys()


def vitess_router(vindex, shards, nodes=("a",)):
    return shardroute.Router(doc(nodes, {"type": "vitess", "vindex": vindex, "shards": shards}))


def probe_router(ksids):
    boundaries = sorted({k for k in ksids if k > 0} | {k + 1 for k in ksids if k + 1 < 2**64})
    names = [f"{start:016x}" if start else "" for start in [0] + boundaries]
    ends = [f"{end:016x}" for end in boundaries] + [""]
    shards = [{"name": f"{start}-{end}", "node": "a"} for start, end in zip(names, ends)]
    return boundaries, shards


@pytest.mark.parametrize("vindex", ["hash", "xxhash", "numeric"])
def test_keyspace_ids_exactly_match_the_oracle(vindex):
    mapped = [(key, oracle_ksid(vindex, key)) for key in KEYS]
    ksids = [int.from_bytes(k, "big") for _, k in mapped if k is not None]
    boundaries, shards = probe_router(ksids)
    router = vitess_router(vindex, shards)
    differences = []
    compared = 0
    for key, ksid in mapped:
        if ksid is None:
            with pytest.raises(shardroute.InvalidKeyError):
                router.route(key)
            continue
        expected = bisect.bisect_right(boundaries, int.from_bytes(ksid, "big"))
        got = router.route(key)
        compared += 1
        if got != expected:
            differences.append((key, ksid.hex(), expected, got))
    print(f"vitess {vindex}: {compared} keys compared, {len(differences)} differences")
    assert compared >= 10_000
    assert not differences, differences[:5]


def test_published_vitess_hash_values():
    for ident, ksid in VITESS_HASH.items():
        assert oracle_ksid("hash", ident).hex() == ksid
        shards = probe_router([int(ksid, 16)])[1]
        router = vitess_router("hash", shards)
        assert shards[router.route(ident)]["name"].startswith(ksid)


def test_keyranges_follow_vitess_bytes_compare():
    names = ["-40", "40-4080", "4080-80", "80-c0a0", "c0a0-c0a1", "c0a1-ff", "ff-"]
    nodes = ["a", "b", "c", "a", "b", "c", "a"]
    shards = [{"name": n, "node": d} for n, d in zip(names, nodes)]
    router = vitess_router("xxhash", shards, nodes=["a", "b", "c"])
    ranges = [tuple(bytes.fromhex(side) for side in name.split("-")) for name in names]
    compared = 0
    for key in KEYS:
        ksid = oracle_ksid("xxhash", key)
        # Go: (len(start) == 0 || bytes.Compare(id, start) >= 0) && (len(end) == 0 || bytes.Compare(id, end) < 0)
        expected = [i for i, (start, end) in enumerate(ranges) if (not start or ksid >= start) and (not end or ksid < end)]
        assert len(expected) == 1
        assert router.route(key) == expected[0], (key, ksid.hex())
        assert router.node(key) == nodes[expected[0]]
        compared += 1
    print(f"vitess keyranges: {compared} keys compared, 0 differences")


@pytest.mark.parametrize(
    "names",
    [["-80"], ["80-"], ["-80", "c0-"], ["-80", "40-"], ["-80", "80-c0"], ["-8", "8-"], ["-zz", "zz-"], ["80-40", "40-"], ["-80", "80"]],
)
def test_names_must_cover_the_keyspace_exactly(names):
    with pytest.raises(shardroute.InvalidTopologyError):
        vitess_router("hash", [{"name": n, "node": "a"} for n in names])
