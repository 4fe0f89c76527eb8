"""The `cassandra` profile against the DataStax Python driver (PyPI `cassandra-driver`).

Every key is routed by shardroute and by the driver; any difference fails. Tokens are
compared exactly through routing: in the "token probe" ring, node `t<i>` holds the
oracle token of key `i` and a node `gap` holds that token minus one, so the range of
`t<i>` is the single token, and shardroute routes key `i` to `t<i>` only if it computes
exactly the driver's token. Three independent driver paths must agree with shardroute:
the pure-Python `cassandra.murmur3.murmur3`, the C extension `cassandra.cmurmur3.murmur3`,
and `cassandra.metadata.Murmur3Token.hash_fn` (which maps Long.MIN_VALUE to MAX). A
second, realistic ring (vnodes) checks ownership and SimpleStrategy replicas against
the driver's `TokenMap.get_replicas`, and composite keys against the driver's own
routing-key packing (`Statement.routing_key = (part, part, ...)`).

Run: .venv/bin/python -m pytest conformance/oracles/test_cassandra.py
"""

import random
import struct
import types

import cassandra
import pytest
from cassandra import cmurmur3, murmur3 as py_murmur3
from cassandra.metadata import KeyspaceMetadata, Murmur3Token, TokenMap
from cassandra.query import SimpleStatement

import shardroute
from shardroute_testing import doc

MIN_LONG = -(1 << 63)
MAX_LONG = (1 << 63) - 1
ORACLE_VERSION = "3.30.1"


def test_oracle_version():
    assert cassandra.__version__ == ORACLE_VERSION, (
        f"cassandra-driver {cassandra.__version__} installed; the tests were written against {ORACLE_VERSION}"
    )


def edge_keys():
    """Keys at every edge of the rule: every length across the 16-byte blocks and
    tails, every single byte, tail bytes >= 0x80 at every tail position, unicode,
    long keys, bigint keys."""
    keys = [b"", "", "123", "user:1", "\u00e9", "\u65e5\u672c", "\U0001f600", "a" * 10_000]
    keys += [bytes([b]) for b in range(256)]
    for length in range(0, 48):
        keys.append(bytes([0xFF]) * length)
        keys.append(bytes([0x80]) * length)
        keys.append(bytes([0x7F]) * length)
        keys.append(bytes(range(length)))
        keys.append(bytes((0x80 + i) & 0xFF for i in range(length)))
    for position in range(16):  # one high byte at each tail position
        for length in range(position + 1, 16):
            tail = bytearray(b"k" * length)
            tail[position] = 0xC3
            keys.append(b"0123456789abcdef" + bytes(tail))
    for value in [0, 1, 2, 127, 128, 255, 256, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64 - 1]:
        keys.append(value)
    return keys


def random_keys(count, seed=20240505):
    rng = random.Random(seed)
    keys = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            keys.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
        elif kind == 1:
            keys.append(f"user:{rng.randrange(10**9)}")
        elif kind == 2:
            alphabet = "az\u00e9\u00df\u0416\u65e5\U0001f600{}:"
            keys.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24))))
        elif kind == 3:
            keys.append(rng.randrange(2**64))
        else:
            keys.append(bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randrange(1, 70))))
    return keys


def key_bytes(key):
    """What the driver hashes: text as UTF-8, an int as a CQL bigint (8 bytes BE)."""
    if isinstance(key, int):
        return struct.pack(">Q", key)
    if isinstance(key, str):
        return key.encode("utf-8")
    return key


KEYS = edge_keys() + random_keys(12_000)


def oracle_token(data):
    """The driver's token, checked to agree across its three paths."""
    pure = py_murmur3.murmur3(data)
    native = cmurmur3.murmur3(data)
    assert pure == native, f"the driver's pure and C murmur3 disagree on {data!r}: {pure} vs {native}"
    token = Murmur3Token.hash_fn(data)
    assert token == (MAX_LONG if pure == MIN_LONG else pure)
    return token


def ring_router(ring):
    """shardroute over a ring: integer tokens by node id."""
    tokens = {host: [str(token) for token in host_tokens] for host, host_tokens in ring.items()}
    return shardroute.Router(doc(list(ring), {"type": "cassandra", "tokens": tokens}))


def test_tokens_exactly_match_the_driver():
    assert len(KEYS) >= 10_000
    tokens = sorted({oracle_token(key_bytes(key)) for key in KEYS})
    owner_of = {token: f"t{index}" for index, token in enumerate(tokens)}
    gap = sorted({token - 1 for token in tokens if token - 1 not in owner_of and token != MIN_LONG})
    ring = {name: [token] for token, name in owner_of.items()}
    ring["gap"] = gap
    router = ring_router(ring)
    differences = []
    for key in KEYS:
        expected = owner_of[oracle_token(key_bytes(key))]
        got = router.node(key)
        if got != expected:
            differences.append((key, expected, got))
    print(f"cassandra token oracle: {len(KEYS)} keys compared, {len(differences)} differences")
    assert not differences, f"{len(differences)} keys differ, first: {differences[:5]}"


def realistic_ring(seed=7, nodes=6, vnodes=16):
    rng = random.Random(seed)
    ring = {}
    used = set()
    for n in range(nodes):
        tokens = []
        while len(tokens) < vnodes:
            token = rng.randrange(MIN_LONG, MAX_LONG + 1)
            if token not in used:
                used.add(token)
                tokens.append(token)
        ring[f"10.0.0.{n + 1}"] = tokens
    # Ring edges: the minimum token, the maximum, and tokens equal to keys' tokens, so
    # `(previous, token]` inclusivity is exercised.
    extra = [MIN_LONG, MAX_LONG] + [oracle_token(key_bytes(key)) for key in KEYS[:: len(KEYS) // 40]]
    for index, token in enumerate(extra):
        if token not in used:
            used.add(token)
            ring[f"10.0.0.{index % nodes + 1}"].append(token)
    return ring


def driver_token_map(ring, replication_factor):
    owner = {Murmur3Token(token): host for host, tokens in ring.items() for token in tokens}
    keyspace = KeyspaceMetadata("ks", True, "SimpleStrategy", {"replication_factor": str(replication_factor)})
    metadata = types.SimpleNamespace(keyspaces={"ks": keyspace})
    return TokenMap(Murmur3Token, owner, sorted(owner), metadata)


def test_ownership_and_simple_strategy_replicas_match_the_driver_token_map():
    ring = realistic_ring()
    token_map = driver_token_map(ring, 3)
    router = ring_router(ring)
    differences = []
    for key in KEYS:
        expected = token_map.get_replicas("ks", Murmur3Token.from_key(key_bytes(key)))
        got = router.replicas(key, 3)
        if got != expected or router.node(key) != expected[0]:
            differences.append((key, expected, got))
    print(f"cassandra TokenMap oracle: {len(KEYS)} keys compared, {len(differences)} differences")
    assert not differences, f"{len(differences)} keys differ, first: {differences[:5]}"


def test_composite_keys_match_the_driver_routing_key():
    rng = random.Random(3)
    ring = realistic_ring()
    token_map = driver_token_map(ring, 1)
    router = ring_router(ring)
    compared = 0
    for i in range(2_000):
        parts = [
            bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 7, 8, 15, 16, 17, 300])))
            for _ in range(rng.randrange(2, 5))
        ]
        statement = SimpleStatement("SELECT 1")
        statement.routing_key = parts
        packed = statement.routing_key
        # The documented encoding, which callers build (core: cassandra::composite_key).
        assert packed == b"".join(struct.pack(">H", len(p)) + p + b"\x00" for p in parts)
        expected = token_map.get_replicas("ks", Murmur3Token.from_key(packed))[0]
        assert router.node(packed) == expected, parts
        compared += 1
    print(f"cassandra composite keys: {compared} compared, 0 differences")


def test_hashing_other_than_default_is_rejected():
    document = doc(["a"], {"type": "cassandra", "tokens": {"a": ["0"]}}, hashing={"function": "crc32"})
    with pytest.raises(shardroute.InvalidTopologyError):
        shardroute.Router(document)
