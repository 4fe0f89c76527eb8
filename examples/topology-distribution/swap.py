"""Routing while the router is swapped (issue 23's third target), side by side in one run:
the median time of `router.node(key)` on a Router held by the caller, and of
`follower.router.node(key)` through an `EtcdFollower` that installs a new epoch every
10 ms meanwhile, in alternating batches on one thread. A lock on the routing path, or a
router rebuilt on each read, would show in the second. Prints one JSON object.

    python swap.py --etcd URLS --key KEY --epochs N    (bench.py runs it)
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from typing import Any

from shardroute.etcd import Etcd, EtcdFollower, publish

BATCH = 20_000
KEYS = [f"user:{i}" for i in range(1024)]


def document(epoch: int) -> Any:
    return {"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": f"n{i}"} for i in range(3 + epoch % 5)],
            "strategy": {"type": "vbucket", "vbuckets": 1024}}


def batch(route: Any) -> float:
    """ns per call of `route(key)` over one batch (each side wrapped alike)."""
    started = time.perf_counter_ns()
    for i in range(BATCH):
        route(KEYS[i & 1023])
    return (time.perf_counter_ns() - started) / BATCH


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--etcd", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--epochs", type=int, default=200)
    args = parser.parse_args()
    etcd = Etcd(args.etcd, timeout=2)
    stored = etcd.get(args.key)[0]
    epoch = json.loads(stored)["epoch"] if stored else 0
    publish(etcd, args.key, document(epoch + 1))
    with EtcdFollower(etcd, args.key) as follower:
        held = follower.router
        assert held is not None
        done = threading.Event()
        first = held.epoch

        def publisher() -> None:
            for next_epoch in range(first + 1, first + 1 + args.epochs):
                publish(etcd, args.key, document(next_epoch))
                time.sleep(0.01)
            done.set()

        thread = threading.Thread(target=publisher)
        thread.start()
        def on_held(key: str) -> str:
            return held.node(key)

        def on_follower(key: str) -> str:
            router = follower.router
            assert router is not None
            return router.node(key)

        direct: list[float] = []
        through: list[float] = []
        while not done.is_set():
            direct.append(batch(on_held))
            through.append(batch(on_follower))
        thread.join()
        follower.wait_for_epoch(first + args.epochs, timeout=10)
        last = follower.router
        print(json.dumps({
            "runtime": "python", "batches": len(direct), "installed": (last.epoch if last else 0) - first,
            "direct_ns": statistics.median(direct), "follower_ns": statistics.median(through),
        }))


if __name__ == "__main__":
    main()
