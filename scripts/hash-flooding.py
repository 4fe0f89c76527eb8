#!/usr/bin/env python3
"""Hash flooding, timed through the Python package (docs/security-and-limits.md).

An attacker who knows a topology's SipHash key (the public default, or a seed that
leaked) finds keys that all land on one shard by trying candidates: this script does it
for shard 0 of a 10-shard jump topology and times it, then routes the same list under a
freshly drawn secret seed and prints the per-shard counts and their chi-square statistic
(9 degrees of freedom: an even spread exceeds 27.88 with probability 0.001). The
assertions live in core/tests/hash_flooding.rs; this prints the numbers, as a Markdown
fragment for `make bench` (target/bench/flooding.md).

Usage: .venv/bin/python scripts/hash-flooding.py [--keys 10000] [--out FILE]
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from typing import Any

import shardroute

SHARDS = 10
BATCH = 100_000


def topology(seed: str | None) -> dict[str, Any]:
    hashing = {"seed": seed} if seed else {}
    return {
        "format": "shardroute/1",
        "epoch": 1,
        "nodes": [{"id": f"n{i}"} for i in range(SHARDS)],
        "strategy": {"type": "jump"},
        "hashing": hashing,
    }


def flood(router: shardroute.Router, wanted: int) -> tuple[list[str], int]:
    """The first `wanted` keys user:0, user:1, ... that route to shard 0, and how many were tried."""
    found: list[str] = []
    tried = 0
    while len(found) < wanted:
        candidates = [f"user:{i}" for i in range(tried, tried + BATCH)]
        tried += BATCH
        found.extend(key for key, shard in zip(candidates, router.route_many(candidates)) if shard == 0)
    return found[:wanted], tried


def counts(router: shardroute.Router, keys: list[str]) -> list[int]:
    spread = [0] * SHARDS
    for shard in router.route_many(keys):
        spread[shard] += 1
    return spread


def chi_square(spread: list[int]) -> float:
    expected = sum(spread) / len(spread)
    return sum((count - expected) ** 2 / expected for count in spread)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--out", help="write the Markdown fragment here (default: stdout)")
    args = parser.parse_args()

    start = time.perf_counter()
    public = shardroute.Router(topology(None))
    keys, tried = flood(public, args.keys)
    seconds = time.perf_counter() - start
    aimed = counts(shardroute.Router(topology(None)), keys)
    seed = secrets.token_hex(16)  # the secret: 16 bytes from the OS generator
    spread = counts(shardroute.Router(topology(seed)), keys)

    lines = [
        "## Hash flooding (Python package, 10-shard jump topology)",
        "",
        f"Command: `.venv/bin/python scripts/hash-flooding.py --keys {args.keys}`; "
        "the assertions are `core/tests/hash_flooding.rs` (`make test-rust`).",
        "",
        "| key | keys on shard 0..9 | chi-square (9 df) |",
        "|---|---|---|",
        f"| public default SipHash key (the attacker's) | {aimed} | {chi_square(aimed):,.1f} |",
        f"| a secret seed (`secrets.token_hex(16)`) | {spread} | {chi_square(spread):.1f} |",
        "",
        f"Finding {args.keys:,} keys that all land on shard 0 took {seconds:.2f} s "
        f"({tried:,} candidates tried, shardroute {shardroute.__version__}); an even spread "
        "exceeds chi-square 27.88 with probability 0.001.",
        "",
    ]
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
