"""Oracle test of the `elasticsearch` profile: every key is routed by shardroute and by
Elasticsearch's routing formula computed over PyPI `mmh3`'s MurmurHash3 x86_32 (pinned in
conformance/requirements-oracles.txt) of the routing string's UTF-16LE bytes, for many
shard counts, explicit routing shards and routing partitions; any difference fails.

The formula is `IndexRouting.hashToShardId` / `IndexRouting.Partitioned.shardId`
(Elasticsearch 8.x; `OperationRouting.calculateScaledShardId` in 7.x) and the default
routing shards `MetadataCreateIndexService.calculateNumRoutingShards`, written out here
in Java's int semantics independently of the Rust code. The hash function is checked
against Elasticsearch's published Murmur3HashFunctionTests values.

Run: .venv/bin/python -m pytest conformance/oracles/test_elasticsearch.py
"""

from __future__ import annotations

import importlib.metadata

import mmh3
import pytest

import shardroute
from oracle_keys import assert_agree, byte_keys, integer_keys, text_keys
from shardroute_testing import doc


def java_int(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def es_hash(routing: str) -> int:
    """Murmur3HashFunction.hash(String): x86_32, seed 0, over UTF-16 code units (LE)."""
    return mmh3.hash(routing.encode("utf-16-le", "surrogatepass"), 0, signed=True)


def default_routing_shards(shards: int) -> int:
    log2_shards = (shards - 1).bit_length()  # 32 - Integer.numberOfLeadingZeros(shards - 1)
    splits = max(1, 10 - log2_shards)
    return shards << splits


def es_shard(routing: str, shards: int, routing_shards: int, partition_size: int = 1, doc_id: str = "") -> int:
    factor = routing_shards // shards
    hash_ = es_hash(routing)
    if partition_size > 1:
        hash_ = java_int(hash_ + es_hash(doc_id) % partition_size)  # Python % is floorMod
    return (hash_ % routing_shards) // factor


def router(shards: int, routing_shards: int | None = None, partition_size: int = 1) -> shardroute.Router:
    strategy: dict[str, object] = {"type": "elasticsearch", "number_of_shards": shards}
    if routing_shards is not None:
        strategy["number_of_routing_shards"] = routing_shards
    if partition_size != 1:
        strategy["routing_partition_size"] = partition_size
    return shardroute.Router(doc(3, strategy))


def routing_keys() -> list[str | bytes | int]:
    utf8 = [key for key in byte_keys() if is_utf8(key)]
    generated = [f"doc-{i}" for i in range(4000)] + [f"{i:x}-ключ-🔑-{i}" for i in range(2000)]
    return [*text_keys(), *utf8, *integer_keys(), *generated]


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def as_text(key: str | bytes | int) -> str:
    if isinstance(key, bytes):
        return key.decode("utf-8")
    return str(key)


def test_oracle_version() -> None:
    assert importlib.metadata.version("mmh3") == "5.3.1", "pin mmh3 as in requirements-oracles.txt"


def test_published_murmur3_values() -> None:
    # Elasticsearch Murmur3HashFunctionTests.testKnownValues.
    for expected, text in [
        (0x5A0CB7C3, "hell"),
        (0xD7C31989, "hello"),
        (0x22AB2984, "hello w"),
        (0xDF0CA123, "hello wo"),
        (0xE7744D61, "hello wor"),
        (0xE07DB09C, "The quick brown fox jumps over the lazy dog"),
        (0x4E63D2AD, "The quick brown fox jumps over the lazy cog"),
    ]:
        assert es_hash(text) == java_int(expected)


def test_default_routing_shards() -> None:
    for shards, expected in [(1, 1024), (2, 1024), (3, 768), (5, 640), (512, 1024), (513, 1026), (1024, 2048)]:
        assert default_routing_shards(shards) == expected
        canonical = router(shards).to_json()
        assert f'"number_of_routing_shards":{expected}' in canonical.replace(" ", "")


@pytest.mark.parametrize("shards", [1, 2, 3, 5, 7, 12, 30, 64, 100, 512, 513, 1000, 1024])
def test_default_routing(shards: int) -> None:
    keys = routing_keys()
    assert len(keys) >= 10_000
    routing_shards = default_routing_shards(shards)
    expected = [es_shard(as_text(key), shards, routing_shards) for key in keys]
    assert_agree(keys, expected, router(shards).route_many(keys))


@pytest.mark.parametrize(("shards", "routing_shards"), [(5, 5), (5, 30), (3, 3 * 7 * 11), (1, 1), (4, 2**30)])
def test_explicit_routing_shards(shards: int, routing_shards: int) -> None:
    keys = routing_keys()
    expected = [es_shard(as_text(key), shards, routing_shards) for key in keys]
    assert_agree(keys, expected, router(shards, routing_shards).route_many(keys))


@pytest.mark.parametrize(("shards", "partition_size"), [(5, 2), (5, 3), (12, 7), (1, 1000), (30, 29)])
def test_routing_partition_size(shards: int, partition_size: int) -> None:
    texts = text_keys()
    ids = [f"doc-{i}" for i in range(len(texts))] + ["", "🔑", "ключ"]
    pairs = [(routing, ids[(i * 7919) % len(ids)]) for i, routing in enumerate(texts) if "\0" not in routing]
    pairs += [(f"user-{i}", f"{i}") for i in range(8000)]
    assert len(pairs) >= 10_000
    routing_shards = default_routing_shards(shards)
    expected = [es_shard(routing, shards, routing_shards, partition_size, doc_id) for routing, doc_id in pairs]
    got = router(shards, partition_size=partition_size).route_many([f"{r}\0{i}" for r, i in pairs])
    assert_agree(pairs, expected, got)


def test_partitioned_key_without_id_rejected() -> None:
    with pytest.raises(shardroute.InvalidKeyError):
        router(5, partition_size=2).route("no-separator")
    with pytest.raises(shardroute.InvalidKeyError):
        router(5, partition_size=2).route(42)


def test_non_utf8_bytes_rejected() -> None:
    r = router(5)
    for key in [b"\xff", b"\x80", b"ok\xc3", b"\xed\xa0\x80"]:
        with pytest.raises(shardroute.InvalidKeyError):
            r.route(key)


def test_hashing_section_rejected() -> None:
    with pytest.raises(shardroute.InvalidTopologyError, match="hashing"):
        shardroute.Router(doc(["a"], {"type": "elasticsearch", "number_of_shards": 2}, hashing={"hash_tag": "redis"}))
