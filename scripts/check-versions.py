#!/usr/bin/env python3
"""Fails unless the Python and npm packages carry the workspace version of Cargo.toml
(the one version source) and every crate inherits it; and unless every package carries
the workspace's license, its repository URL and the two license texts of the root."""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
workspace = re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', (root / "Cargo.toml").read_text()).group(1)
problems = []
for crate in ["core", "conformance", "cli", "capi", "bindings-py", "bindings-node", "bindings-wasm"]:
    text = (root / crate / "Cargo.toml").read_text()
    if "version.workspace = true" not in text:
        problems.append(f"{crate}/Cargo.toml does not inherit the workspace version")
pyproject = (root / "bindings-py" / "pyproject.toml").read_text()
if not re.search(r'dynamic\s*=\s*\[[^\]]*"version"', pyproject):
    problems.append("bindings-py/pyproject.toml must take its version from Cargo (dynamic = [\"version\"])")
for other in ("cli",):
    if not re.search(r'dynamic\s*=\s*\[[^\]]*"version"', (root / other / "pyproject.toml").read_text()):
        problems.append(f"{other}/pyproject.toml must take its version from Cargo (dynamic = [\"version\"])")
for package in ["bindings-node", "bindings-wasm"]:
    version = json.loads((root / package / "package.json").read_text())["version"]
    if version != workspace:
        problems.append(f"{package}/package.json has version {version}, the workspace has {workspace}")
license = re.search(r'\[workspace\.package\][^\[]*?\nlicense = "([^"]+)"', (root / "Cargo.toml").read_text()).group(1)
repository = re.search(r'\[workspace\.package\][^\[]*?\nrepository = "([^"]+)"', (root / "Cargo.toml").read_text()).group(1)
for package in ["bindings-node", "bindings-wasm"]:
    manifest = json.loads((root / package / "package.json").read_text())
    url = manifest.get("repository")
    url = url.get("url") if isinstance(url, dict) else url
    if manifest.get("license") != license or url != repository:
        problems.append(f"{package}/package.json: license {manifest.get('license')!r} and repository {url!r}, "
                        f"the workspace has {license!r} and {repository!r}")
# npm packs only the files listed (a LICENSE-MIT is not one npm adds by itself).
for name in ["LICENSE-MIT", "LICENSE-APACHE"]:
    if name not in json.loads((root / "bindings-node" / "package.json").read_text()).get("files", []):
        problems.append(f"bindings-node/package.json: files does not list {name}")
if repository not in pyproject:
    problems.append(f"bindings-py/pyproject.toml does not name the repository {repository}")
for package in ["core", "cli", "bindings-py", "bindings-node", "bindings-wasm"]:
    for name in ["LICENSE-MIT", "LICENSE-APACHE"]:
        copy = root / package / name
        if not copy.is_file() or copy.read_bytes() != (root / name).read_bytes():
            problems.append(f"{package}/{name} is missing or differs from the root's {name}")
if problems:
    print("version check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"versions: every package is {workspace}, {license}, with both license texts")
