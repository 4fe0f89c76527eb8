#!/usr/bin/env python3
"""`make demo`: routes the demo keys (conformance/demo/keys.json) with the demo topology
(conformance/demo/topology.json) in Rust, Python, Node (addon) and WASM, prints the
answers side by side and says whether all four runtimes agree."""
import json
import pathlib
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
runtimes = {
    "rust": [str(root / "target/release/demo")],
    "python": [str(root / ".venv/bin/python"), str(root / "bindings-py/examples/demo.py")],
    "node": ["node", str(root / "bindings-node/examples/demo.mjs")],
    "wasm": ["node", str(root / "bindings-wasm/examples/demo.mjs")],
}
results = {}
for name, command in runtimes.items():
    completed = subprocess.run(command, capture_output=True, text=True, cwd=root)
    if completed.returncode != 0:
        print(f"{name} failed:\n{completed.stderr}", file=sys.stderr)
        sys.exit(1)
    results[name] = json.loads(completed.stdout)

topology = json.loads((root / "conformance/demo/topology.json").read_text())
print(f"topology: {topology['strategy']['type']} over {len(topology['nodes'])} nodes, epoch {topology['epoch']}, "
      f"hash tag {topology.get('hashing', {}).get('hash_tag', 'none')}\n")
names = list(runtimes)
width = max(len(row["key"]) for row in results["rust"]) + 2
print(f"{'key':{width}}" + "".join(f"{name:>28}" for name in names))
agree = True
for index, row in enumerate(results["rust"]):
    cells = []
    for name in names:
        other = results[name][index]
        cells.append(f"{other['shard']}:{other['node']} ({','.join(other['replicas'][1:])})")
        agree &= other == row
    print(f"{json.dumps(row['key'], ensure_ascii=False):{width}}" + "".join(f"{cell:>28}" for cell in cells))
print()
if agree and all(len(results[n]) == len(results["rust"]) for n in names):
    print(f"all {len(names)} runtimes agree on all {len(results['rust'])} keys (shard, node and replica order)")
else:
    print("MISMATCH: the runtimes disagree")
    sys.exit(1)
