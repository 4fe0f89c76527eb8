#!/usr/bin/env python3
"""Fail early when a test would start a program that setup does not install.

`make test` and `make check` run this first. It reads the one table of system packages
(SYSTEM_PACKAGES in scripts/setup.sh: package | programs tests start from it | why) and:

1. finds every program the tests, examples, benchmarks and scripts start or look up
   (`shutil.which("x")`, `command -v x`, a literal /usr/... path, `spawn("x")`, `Popen(["x"`),
   and fails when one is in no row of the table and not in PROVIDED_ELSEWHERE below;
2. checks that every program of the table is there (on PATH, or at its path), and fails
   with the setup command and the package when one is not.

So a new live test that starts, say, a new server fails here, on every machine, until a row
of the table installs it: it cannot pass only where somebody installed it by hand.

    python3 scripts/check-servers.py           # both checks
    python3 scripts/check-servers.py --table   # print the table (package, programs, why)
    python3 scripts/check-servers.py --readme  # rewrite the "System packages" list of docs/development.md from it

The check also fails when that list (docs/development.md, linked from README) differs from the table.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETUP = os.path.join(ROOT, "scripts", "setup.sh")

# Programs the tests start that no Debian package of the table provides, and where they
# come from instead. Everything else a test starts must be in a row of SYSTEM_PACKAGES.
PROVIDED_ELSEWHERE = {
    "node": "the machine's Node.js (a precondition, README)",
    "npm": "Node.js", "npx": "Node.js",
    "python3": "the machine's Python 3 (a precondition)", "python": "the .venv",
    "cargo": "rustup (a precondition)", "rustc": "rustup", "rustup": "rustup",
    "maturin": "the .venv (bindings-py/requirements-dev.txt)",
    "cargo-zigbuild": "the .venv (scripts/requirements-dist.txt)", "auditwheel": "the .venv (scripts/requirements-dist.txt)",
    "wasm-bindgen": "cargo install wasm-bindgen-cli (scripts/setup.sh)",
    "deno": "the npm package deno (bindings-wasm devDependencies)",
    "workerd": "the npm package workerd (bindings-wasm devDependencies)",
    "gcc": "g++ (its dependency)", "cc": "g++ (its dependency)", "g++": "g++",
    "git": "the checkout itself",
    **{tool: "Debian's base system" for tool in
       ("bash", "sh", "env", "true", "kill", "find", "nproc", "gzip", "tar", "ip", "uname", "sha256sum", "ss",
        "setpriv", "dpkg", "apt-get")},
}

# (pattern, group): where a program's name appears when code starts or looks one up.
PATTERNS = [
    re.compile(r"""shutil\.which\(\s*["']([\w.+-]+)["']"""),
    re.compile(r"""command -v ([\w.+-]+)"""),
    re.compile(r"""\b(?:spawn|spawnSync|execFile|execFileSync)\(\s*["']([\w.+-]+)["']"""),
    re.compile(r"""\b(?:Popen|run|check_call|check_output)\(\s*\[\s*["']([\w.+-]+)["']"""),
    re.compile(r"""["'`](/usr/(?:s?bin|lib/[\w.+/-]+?/bin)/[\w.+-]+)["'`]"""),
]
SCANNED = ("examples", "conformance", "scripts", "bench", "playground", "bindings-py/tests",
           "bindings-py/test.sh", "bindings-node/test", "bindings-node/test.sh", "bindings-wasm/test",
           "bindings-wasm/test.sh", "bindings-wasm/build.sh", "bindings-node/build.sh",
           "bindings-py/build.sh", "Makefile", "fuzz")
SOURCE = re.compile(r"\.(py|sh|mjs|cjs|js|ts)$|(^|/)Makefile$")


def table() -> list[tuple[str, list[str], str]]:
    """The rows of SYSTEM_PACKAGES in scripts/setup.sh: (package, programs, why)."""
    text = open(SETUP, encoding="utf-8").read()
    found = re.search(r"^SYSTEM_PACKAGES=\$\(cat <<'TABLE'\n(.*?)\nTABLE\n\)$", text, re.M | re.S)
    if not found:
        sys.exit("check-servers: no SYSTEM_PACKAGES table in scripts/setup.sh")
    rows = []
    for line in found.group(1).splitlines():
        package, programs, why = (cell.strip() for cell in line.split("|", 2))
        rows.append((package, [] if programs == "-" else programs.split(","), why))
    return rows


README = os.path.join(ROOT, "docs", "development.md")  # its "System packages" list
README_BLOCK = re.compile(r"(<!-- system-packages:[^\n]*-->\n)(.*?)(<!-- /system-packages -->)", re.S)


def readme_list(rows: list[tuple[str, list[str], str]]) -> str:
    return "".join(f"- `{package}`: {why}\n" for package, _, why in rows)


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *SCANNED],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.split("\n")
    return [path for path in listed if path and SOURCE.search(path) and "node_modules/" not in path]


def started_programs() -> dict[str, str]:
    """Every program name the scanned code starts or looks up -> the first place it does."""
    found: dict[str, str] = {}
    for path in tracked_files():
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full) or path in ("scripts/check-servers.py", "scripts/tests/test_check_servers.py"):
            continue
        for number, line in enumerate(open(full, encoding="utf-8", errors="replace"), 1):
            for name in programs_in(line):
                found.setdefault(name, f"{path}:{number}")
    return found


def programs_in(line: str) -> list[str]:
    """The program names one line of code starts or looks up."""
    return [name for pattern in PATTERNS for name in pattern.findall(line)]


def unprovided(rows: list[tuple[str, list[str], str]], names: dict[str, str]) -> list[str]:
    """The names (of `names`: name -> where) that no row provides and that come from nowhere else."""
    provided = {os.path.basename(p) for _, programs, _ in rows for p in programs}
    provided |= {p for _, programs, _ in rows for p in programs}
    return [name for name in sorted(names)
            if name not in provided and os.path.basename(name) not in provided
            and os.path.basename(name) not in PROVIDED_ELSEWHERE]


def main() -> int:
    rows = table()
    if "--table" in sys.argv:
        for package, programs, why in rows:
            print(f"{package}\t{','.join(programs) or '-'}\t{why}")
        return 0
    if "--readme" in sys.argv:
        text = open(README, encoding="utf-8").read()
        if not README_BLOCK.search(text):
            sys.exit("check-servers: docs/development.md has no <!-- system-packages --> block")
        text = README_BLOCK.sub(lambda m: m.group(1) + readme_list(rows) + m.group(3), text)
        open(README, "w", encoding="utf-8").write(text)
        return 0
    errors = []
    started = started_programs()
    for name in unprovided(rows, started):
        errors.append(
            f"{started[name]} starts `{name}`, which no row of SYSTEM_PACKAGES in scripts/setup.sh installs: "
            "add its Debian package there (or, if it is not a Debian package, to PROVIDED_ELSEWHERE "
            "in scripts/check-servers.py, saying where it comes from)"
        )
    for package, programs, _ in rows:
        for program in programs:
            present = os.path.exists(program) if "/" in program else shutil.which(program)
            if not present:
                errors.append(f"`{program}` is missing: run `make setup` (scripts/setup.sh), "
                              f"which installs the Debian package {package}")
    block = README_BLOCK.search(open(README, encoding="utf-8").read())
    if not block or block.group(2) != readme_list(rows):
        errors.append("docs/development.md's system package list differs from SYSTEM_PACKAGES: "
                      "run `python3 scripts/check-servers.py --readme`")
    for error in errors:
        print(f"check-servers: {error}", file=sys.stderr)
    if errors:
        return 1
    count = sum(len(programs) for _, programs, _ in rows)
    print(f"check-servers: {count} programs from {len(rows)} packages present; every program a test starts is in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
