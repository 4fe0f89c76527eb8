"""Oracle test of the `couchbase` profile.

Every key of oracle_keys.crc_keys (>= 10,000: empty, every byte, 0x80-0xFF, long,
unicode, integers) is routed by shardroute over a topology imported from a bucket
config (conformance/reference/couchbase-bucket-config*.json, via the
`import_couchbase_config` operation) and compared with:

- the vbucket: libcouchbase's formula `((crc32(key) >> 16) & 0x7fff) % len(vBucketMap)`
  computed with Python's `zlib.crc32` (an independent CRC-32 implementation: zlib);
- the node and replicas: read straight from the config's `vBucketServerMap`
  (`serverList[vBucketMap[v][i]]`, `-1` = no node; a key whose active is `-1` must fail
  with `no_nodes`, as libcouchbase fails it with LCB_ERR_NO_MATCHING_SERVER);
- published expectations of Couchbase's own code: couchbaselabs/cbgb vbucket_test.go
  ("hello" -> 528 of 1024) and couchbase/go-couchbase vbmap_test.go TestVBHash
  (k0..k5 over 256 vbuckets).

No Couchbase SDK exposes its key -> vbucket function without a live server (the PyPI
and npm `couchbase` packages map keys inside their C++ core only after bootstrapping
from a cluster), and Debian has no libcouchbase package, so zlib is the oracle of the
CRC and the published values pin the formula.

Run: .venv/bin/python -m pytest conformance/oracles/test_couchbase.py
"""

from __future__ import annotations

import json
import pathlib
import zlib

import pytest

import shardroute
from oracle_keys import assert_agree, crc_keys, key_bytes, short
from shardroute_testing import doc

REFERENCE = pathlib.Path(__file__).resolve().parent.parent / "reference"
BASE = doc(["bootstrap"], "jump", epoch=0)


def vbucket(data: bytes, count: int) -> int:
    return ((zlib.crc32(data) >> 16) & 0x7FFF) % count


def load(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


def imported(config: dict) -> shardroute.Router:
    result = shardroute.apply(BASE, {"op": "import_couchbase_config", "config": config})
    return shardroute.Router(result["topology"])


@pytest.mark.parametrize("name", ["couchbase-bucket-config.json", "couchbase-bucket-config-rebalance.json"])
def test_every_key_matches_the_bucket_config(name: str) -> None:
    config = load(name)
    servers = config["vBucketServerMap"]["serverList"]
    rows = config["vBucketServerMap"]["vBucketMap"]
    router = imported(config)
    keys = crc_keys()
    assert len(keys) >= 10_000
    differences = []
    unserved = 0
    for key in keys:
        v = vbucket(key_bytes(key), len(rows))
        chain = [servers[i] for i in rows[v] if i >= 0]
        if rows[v][0] < 0:
            unserved += 1
            with pytest.raises(shardroute.NoNodesError):
                router.route(key)
            with pytest.raises(shardroute.NoNodesError):
                router.node(key)
            continue
        got = (router.route(key), router.node(key), router.replicas(key, len(chain)))
        if got != (v, servers[rows[v][0]], chain):
            differences.append((short(key), got, v))
    assert differences == [], f"{len(differences)} of {len(keys)} keys differ, first: {differences[:5]}"
    if name.endswith("rebalance.json"):
        assert unserved > 0, "the fixture's -1 actives must be exercised"


@pytest.mark.parametrize("count", [1, 7, 64, 1000, 1024, 32768])
def test_vbucket_formula_for_many_map_sizes(count: int) -> None:
    servers = ["10.0.0.1:11210", "10.0.0.2:11210"]
    config = {
        "rev": 1,
        "vBucketServerMap": {
            "hashAlgorithm": "CRC",
            "numReplicas": 0,
            "serverList": servers,
            "vBucketMap": [[v % 2] for v in range(count)],
        },
    }
    router = imported(config)
    keys = crc_keys()
    expected = [vbucket(key_bytes(key), count) for key in keys]
    assert_agree(keys, expected, router.route_many(keys))


def test_published_expectations() -> None:
    one = imported({"rev": 1, "vBucketServerMap": {"serverList": ["a:11210"], "vBucketMap": [[0]] * 1024}})
    assert one.route("hello") == 528  # couchbaselabs/cbgb vbucket_test.go
    go = imported({"rev": 1, "vBucketServerMap": {"serverList": ["a:11210"], "vBucketMap": [[0]] * 256}})
    assert [go.route(f"k{i}") for i in range(6)] == [9, 14, 7, 0, 100, 99]  # couchbase/go-couchbase TestVBHash


def test_rev_epoch_ordering() -> None:
    config = load("couchbase-bucket-config.json")
    current = imported(config)
    assert current.epoch == (config["revEpoch"] << 32) | config["rev"]
    newer_rev = dict(config, rev=config["rev"] + 1)
    assert current.replace(imported(newer_rev).to_json()).epoch == current.epoch + 1
    older_epoch = dict(config, revEpoch=config["revEpoch"] - 1, rev=config["rev"] + 10_000)
    with pytest.raises(shardroute.StaleEpochError):
        current.replace(imported(older_epoch).to_json())
    report = shardroute.apply(json.loads(current.to_json()), {"op": "import_couchbase_config", "config": json.dumps(config)})
    assert report["newer"] is False and report["rev"] == config["rev"] and report["rev_epoch"] == config["revEpoch"]


def test_non_default_hashing_is_refused() -> None:
    document = json.loads(imported(load("couchbase-bucket-config-rebalance.json")).to_json())
    document["hashing"] = {"function": "crc32"}
    with pytest.raises(shardroute.InvalidTopologyError, match="^hashing"):
        shardroute.Router(document)
