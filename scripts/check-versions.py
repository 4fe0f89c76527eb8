#!/usr/bin/env python3
"""Fails unless the Python and npm packages carry the workspace version of Cargo.toml
(the one version source) and every crate inherits it."""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
workspace = re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', (root / "Cargo.toml").read_text()).group(1)
problems = []
for crate in ["core", "conformance", "bindings-py", "bindings-node", "bindings-wasm"]:
    text = (root / crate / "Cargo.toml").read_text()
    if "version.workspace = true" not in text:
        problems.append(f"{crate}/Cargo.toml does not inherit the workspace version")
pyproject = (root / "bindings-py" / "pyproject.toml").read_text()
if not re.search(r'dynamic\s*=\s*\[[^\]]*"version"', pyproject):
    problems.append("bindings-py/pyproject.toml must take its version from Cargo (dynamic = [\"version\"])")
for package in ["bindings-node", "bindings-wasm"]:
    version = json.loads((root / package / "package.json").read_text())["version"]
    if version != workspace:
        problems.append(f"{package}/package.json has version {version}, the workspace has {workspace}")
if problems:
    print("version check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"versions: every package is {workspace}")
