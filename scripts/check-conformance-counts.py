#!/usr/bin/env python3
"""Fails unless every conformance runner (RUNNERS) ran, passed everything, skipped nothing,
and counted the same non-zero number of cases (see conformance/README.md).

`--without RUNNER` leaves one out: `make check` runs no browser, no Java and no Go, so it checks the others."""
import json
import pathlib
import sys

RUNNERS = ["rust", "python", "node", "wasm-node", "wasm-chromium", "c", "java", "go"]
args = sys.argv[1:]
while args[:1] == ["--without"] and len(args) >= 2:
    if args[1] not in RUNNERS:
        sys.exit(f"check-conformance-counts: no runner {args[1]!r}")
    RUNNERS.remove(args[1])
    args = args[2:]
if args:
    sys.exit("usage: check-conformance-counts.py [--without RUNNER]...")
root = pathlib.Path(__file__).resolve().parent.parent / "target" / "conformance"
problems, counts = [], {}
for runner in RUNNERS:
    path = root / f"{runner}.json"
    if not path.exists():
        problems.append(f"{runner}: no result file {path} (the runner did not run)")
        continue
    result = json.loads(path.read_text())
    counts[runner] = result["passed"]
    if result["failed"] or result["skipped"]:
        problems.append(f"{runner}: {result['failed']} failed, {result['skipped']} skipped")
    if result["passed"] == 0:
        problems.append(f"{runner}: ran no case")
if len(set(counts.values())) > 1:
    problems.append("runners disagree on the count: " + ", ".join(f"{r}={c}" for r, c in counts.items()))
for runner, count in counts.items():
    print(f"  {runner:14} {count} passed")
if problems:
    print("conformance count check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"conformance: all {len(RUNNERS)} runners passed the same {next(iter(counts.values()))} cases")
