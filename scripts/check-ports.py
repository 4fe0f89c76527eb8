#!/usr/bin/env python3
"""Fail when a port is picked by "bind port 0, read the number, close, reuse it" (issue 41).

Port 0 hands out numbers of the kernel's ephemeral range, where every outgoing connection
takes its local port too: between the close and the server's own bind, any connection the
test opens may take the number, and the server fails with "Address already in use", rarely
and at random. A server that can bind port 0 itself and say its port does so; one that can
only be handed a number gets a reserved one (examples/harness.py `reserve_ports` /
`start_on_ports`, bindings-wasm/test/edge/ports.mjs `reservePorts` / `startOnPorts`,
cli/tests/ports/mod.rs `reserve` / `start_on_ports`).

Fails (exit 1, one `file:line: why` a finding) on:
1. a function named, a call or an import of free_port / freePort / get_free_port / find_free_port
   (any case, with or without the underscore);
2. a bind of port 0 whose socket is released right after its port is read:
   - Python: `.bind((host, 0))` in a `with socket...:` block that reads `getsockname()`,
     or followed within a few lines by `getsockname()` and `.close()`;
   - JS: `.listen(0` (or `listen({ port: 0`) followed within a few lines by
     `.address()` and then `.close(` (not in a function or handle defined after it: a
     server's own `close()` for later is fine);
   - Rust: `bind("...:0")` (or `bind(("...", 0))`) whose listener is a temporary: its
     `.local_addr()...port()` read in the same statement, no `let` keeping it.
A line that says `ports: ok` (a comment) is not reported: for a socket that stays open.

    python3 scripts/check-ports.py            # every tracked source file
    python3 scripts/check-ports.py FILE...    # those files only
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = (".py", ".mjs", ".js", ".cjs", ".ts", ".mts", ".rs")
# Files that name the pattern to find it, or to test that it is found.
SKIPPED = {"scripts/check-ports.py", "scripts/tests/test_check_ports.py"}
WINDOW = 8  # lines after a bind of port 0 in which the read and the close count as one use

NAMED = re.compile(r"\b(?:get_?|find_?)?free_?ports?\s*\(", re.IGNORECASE)
DEFINED = re.compile(r"\b(?:def|function|fn|const|let|var)\s+(?:get_?|find_?)?free_?ports?\b", re.IGNORECASE)
IMPORTED = re.compile(r"\bimport\b.*\b(?:get_?|find_?)?free_?ports?\b", re.IGNORECASE)
PY_BIND_ZERO = re.compile(r"\.bind\(\s*\(\s*(?:['\"][^'\"]*['\"]|\w+)\s*,\s*0\s*\)\s*\)")
JS_LISTEN_ZERO = re.compile(r"\.listen\(\s*(?:0\s*[,)]|\{[^}]*\bport\s*:\s*0\b)")
RS_BIND_ZERO = re.compile(r"bind\(\s*(?:\"[^\"]*:0\"|\(\s*\"[^\"]*\"\s*,\s*0\s*\))\s*\)")
OK = "ports: ok"
# A line that starts a function or a returned handle: a close after it is a later close (a
# server's `close()` method), not the release of a port just read.
LATER = re.compile(r"^\s*(?:def\s|return\s*\{|(?:async\s+)?function\b|\w+\s*:\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>|\w+\s*\([^)]*\)\s*\{)")


def released(following: list[str], read: str) -> bool:
    """Whether `following` (the lines after a bind of port 0) read its port (`read`) and
    then close the socket, before any line that starts a function or a returned handle."""
    seen_read = False
    for line in following:
        if LATER.search(line):
            return False
        seen_read = seen_read or read in line
        if seen_read and (".close(" in line or "drop(" in line):
            return True
    return False


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [name for name in listed.decode().split("\0") if name]
    return [name for name in names if name.endswith(SOURCES) and "node_modules/" not in name and name not in SKIPPED]


def with_block(lines: list[str], index: int) -> tuple[str, list[str]] | None:
    """The `with` statement enclosing line `index` (Python) and its block's lines, if any."""
    indent = len(lines[index]) - len(lines[index].lstrip())
    for start in range(index - 1, max(-1, index - WINDOW), -1):
        line = lines[start]
        own = len(line) - len(line.lstrip())
        if line.strip() and own < indent:
            if not line.lstrip().startswith("with "):
                return None
            block = []
            for following in lines[start + 1:]:
                if following.strip() and len(following) - len(following.lstrip()) <= own:
                    break
                block.append(following)
            return line, block
    return None


def findings(path: str, text: str) -> list[tuple[int, str]]:
    """(line number, why) for each use of the pattern in `text` (the file at `path`)."""
    lines = text.splitlines()
    found: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        if OK in line:
            continue
        number = index + 1
        if DEFINED.search(line) or NAMED.search(line) or IMPORTED.search(line):
            found.append((number, "a free_port/freePort helper: a port guessed, then bound later by someone else"))
            continue
        if path.endswith(".py") and PY_BIND_ZERO.search(line):
            enclosing = with_block(lines, index)
            if enclosing and "socket" in enclosing[0] and any("getsockname" in each for each in enclosing[1]):
                found.append((number, "port 0 bound in a `with socket` block that reads its number: released at the block's end"))
            elif released(lines[index:index + WINDOW], "getsockname"):
                found.append((number, "port 0 bound, its number read, the socket closed: the number is reused later"))
        elif path.endswith((".mjs", ".js", ".cjs", ".ts", ".mts")) and JS_LISTEN_ZERO.search(line):
            if released(lines[index:index + WINDOW], ".address()"):
                found.append((number, "listen(0), the port read, the server closed: the number is reused later"))
        elif path.endswith(".rs") and RS_BIND_ZERO.search(line):
            statement = line.split("//")[0]
            if ".port()" in statement and not re.search(r"\blet\s+\w+\s*=\s*\w*(?:::)?\w*TcpListener::bind", statement):
                found.append((number, "a listener of port 0 dropped once its port is read: the number is reused later"))
    return found


def main(argv: list[str]) -> int:
    # Files named on the command line are read as given; the tracked ones from the root.
    paths = [(path, path) for path in argv] or [(path, os.path.join(ROOT, path)) for path in tracked_files()]
    failed = 0
    for path, full in paths:
        try:
            with open(full, encoding="utf-8", errors="replace") as source:
                text = source.read()
        except OSError as error:
            print(f"{path}: {error}", file=sys.stderr)
            failed += 1
            continue
        for number, why in findings(path, text):
            print(f"{path}:{number}: {why}")
            failed += 1
    if failed:
        print(
            f"check-ports: {failed} port(s) picked by bind-0-then-close; let the server bind port 0 itself and report "
            "its port, or take one of reserve_ports/start_on_ports (examples/harness.py), reservePorts/startOnPorts "
            "(bindings-wasm/test/edge/ports.mjs), ports::reserve/start_on_ports (cli/tests/ports/mod.rs)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
