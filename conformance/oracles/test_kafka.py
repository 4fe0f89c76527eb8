"""Oracle test of the `kafka` profile (partitioner "java"): every key is routed by
shardroute and by kafka-python's own DefaultPartitioner (PyPI `kafka-python`, pinned in
conformance/requirements-oracles.txt), over several partition counts; any difference
fails. kafkajs (both partitioners) is checked by kafka.test.mjs.

Run: .venv/bin/python -m pytest conformance/oracles/test_kafka.py
"""

from __future__ import annotations

import kafka  # type: ignore[import-untyped]
import pytest
from kafka.partitioner.default import DefaultPartitioner, murmur2  # type: ignore[import-untyped]

import shardroute
from oracle_keys import all_keys, assert_agree, key_bytes, text_keys
from shardroute_testing import doc

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


def router(partitions: int, nodes: int = 3) -> shardroute.Router:
    return shardroute.Router(doc(nodes, {"type": "kafka", "partitions": partitions}))


def test_oracle_version() -> None:
    assert kafka.__version__ == "3.0.12", "pin kafka-python as in requirements-oracles.txt"


def test_enough_keys() -> None:
    assert len(all_keys()) >= 10_000


@pytest.mark.parametrize("partitions", PARTITIONS)
def test_java_partitioner_matches_kafka_python(partitions: int) -> None:
    keys = all_keys()
    cluster = FakeCluster(partitions)
    partitioner = DefaultPartitioner()
    expected = [partitioner.partition(TOPIC, key, key_bytes(key), None, None, cluster) for key in keys]
    assert_agree(keys, expected, router(partitions).route_many(keys))


def test_leaders_follow_partitions() -> None:
    leaders = ["b", "a", "c", "a"]
    r = shardroute.Router(doc(["a", "b", "c"], {"type": "kafka", "partitions": 4, "leaders": leaders}))
    for key in text_keys()[:500]:
        partition = (murmur2(key_bytes(key)) & 0x7FFFFFFF) % 4
        assert r.route(key) == partition
        assert r.node(key) == leaders[partition]


def test_hashing_section_rejected() -> None:
    with pytest.raises(shardroute.InvalidTopologyError, match="hashing"):
        shardroute.Router(doc(["a"], {"type": "kafka", "partitions": 4}, hashing={"function": "crc32"}))
