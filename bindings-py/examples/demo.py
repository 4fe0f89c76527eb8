"""Routes the demo keys through the demo topology and prints one JSON array.

    python bindings-py/examples/demo.py

Reads conformance/demo/topology.json and keys.json (found relative to this file) and
prints `[{"key", "shard", "node", "replicas"}, ...]` with two replicas per key, as
compact UTF-8 JSON, the bytes JavaScript's JSON.stringify gives for the same rows.
"""

import json
import sys
from pathlib import Path

import shardroute

DEMO = Path(__file__).resolve().parents[2] / "conformance" / "demo"


def main() -> None:
    topology = json.loads((DEMO / "topology.json").read_text(encoding="utf-8"))
    keys = json.loads((DEMO / "keys.json").read_text(encoding="utf-8"))
    router = shardroute.Router(topology)
    rows = [
        {"key": key, "shard": router.route(key), "node": router.node(key), "replicas": router.replicas(key, 2)}
        for key in keys
    ]
    # Compact and UTF-8 whatever the locale: byte for byte what JSON.stringify prints.
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")


if __name__ == "__main__":
    main()
