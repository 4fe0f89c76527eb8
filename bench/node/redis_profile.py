"""Issue 37's profile of one command at a time (not part of `make bench`): starts the
example's Redis Cluster (examples/redis-cluster/cluster.py, 3 primaries + 3 replicas on
127.0.0.1), then runs bench/node/redis_profile.mjs against it with the arguments given
here, and stops the cluster.

    .venv/bin/python bench/node/redis_profile.py [--cpu-prof] -- --keys N --passes P [--client ours|ioredis] [--mode off]

Arguments before `--` go to node (e.g. `--cpu-prof --cpu-prof-dir DIR`), after it to the
script. Without `--client` it times ours and ioredis' Cluster interleaved (the order
rotating) and prints the medians and the ratio.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "redis-cluster"))
from cluster import Cluster  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "node", "redis_profile.mjs")


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    node_args, script_args = argv[:split], argv[split + 1:]
    with Cluster() as cluster:
        subprocess.run(["node", *node_args, SCRIPT, "--seeds", cluster.seed().address, *script_args], check=True)


if __name__ == "__main__":
    main()
