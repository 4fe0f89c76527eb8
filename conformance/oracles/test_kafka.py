"""Oracle test of the `kafka` profile (partitioner "java"): every key is routed by
shardroute and by kafka-python's own DefaultPartitioner (PyPI `kafka-python`, pinned in
conformance/requirements-oracles.txt), over several partition counts; any difference
fails. kafkajs (both partitioners) is checked by kafka.test.mjs.

Run: .venv/bin/python -m pytest conformance/oracles/test_kafka.py
"""

from __future__ import annotations

import pytest

try:
    import kafka  # type: ignore[import-untyped]
    from kafka.partitioner.default import DefaultPartitioner, murmur2  # type: ignore[import-untyped]
except ImportError as err:  # never a skip: the oracle is the point of the test
    raise ImportError(
        "kafka-python is not installed: run `.venv/bin/pip install -r conformance/requirements-oracles.txt`"
    ) from err

import shardroute
from kafka_es_keys import byte_keys, integer_keys, text_keys

PARTITIONS = [1, 2, 3, 7, 12, 100, 1000, 65536]
TOPIC = "orders"


class FakeCluster:
    """The three calls DefaultPartitioner makes on kafka-python's ClusterMetadata."""

    def __init__(self, partitions: int) -> None:
        self.partitions = set(range(partitions))

    def topics(self) -> set[str]:
        return {TOPIC}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self.partitions

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.partitions


def serialized(key: bytes | str | int) -> bytes:
    """The profile's documented meaning of each key form."""
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    return str(key).encode("ascii")


def router(partitions: int, nodes: int = 3) -> shardroute.Router:
    return shardroute.Router(
        {
            "format": "shardroute/1",
            "epoch": 1,
            "nodes": [{"id": f"broker-{i}"} for i in range(nodes)],
            "strategy": {"type": "kafka", "partitions": partitions},
        }
    )


def all_keys() -> list[bytes | str | int]:
    return [*byte_keys(), *text_keys(), *integer_keys()]


def test_oracle_version() -> None:
    assert kafka.__version__ == "3.0.12", "pin kafka-python as in requirements-oracles.txt"


def test_enough_keys() -> None:
    assert len(all_keys()) >= 10_000


@pytest.mark.parametrize("partitions", PARTITIONS)
def test_java_partitioner_matches_kafka_python(partitions: int) -> None:
    keys = all_keys()
    cluster = FakeCluster(partitions)
    partitioner = DefaultPartitioner()
    expected = [partitioner.partition(TOPIC, key, serialized(key), None, None, cluster) for key in keys]
    got = router(partitions).route_many(keys)
    differences = [(key, want, have) for key, want, have in zip(keys, expected, got) if want != have]
    assert not differences, f"{len(differences)} of {len(keys)} keys differ, first: {differences[:5]}"


def test_leaders_follow_partitions() -> None:
    leaders = ["b", "a", "c", "a"]
    r = shardroute.Router(
        {
            "format": "shardroute/1",
            "epoch": 1,
            "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            "strategy": {"type": "kafka", "partitions": 4, "leaders": leaders},
        }
    )
    for key in text_keys()[:500]:
        partition = (murmur2(serialized(key)) & 0x7FFFFFFF) % 4
        assert r.route(key) == partition
        assert r.node(key) == leaders[partition]


def test_hashing_section_rejected() -> None:
    with pytest.raises(shardroute.InvalidTopologyError, match="hashing"):
        shardroute.Router(
            {
                "format": "shardroute/1",
                "epoch": 1,
                "hashing": {"function": "crc32"},
                "nodes": [{"id": "a"}],
                "strategy": {"type": "kafka", "partitions": 4},
            }
        )
