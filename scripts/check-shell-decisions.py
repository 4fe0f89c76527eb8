#!/usr/bin/env python3
"""Fail when a shell decides what the core decides: a literal timeout, interval, backoff or
retry count, a sleep or timer of a fixed length, or an HTTP status that means something
(issues 35 and 36: "no literal timeout or retry list remains in any shell").

The shells that follow a topology (etcd, HTTP) and talk to Redis Cluster move bytes and
keep the one timer their core session asks for (`SourceSession.deadline`,
`ClusterSession.next_deadline`); every time and every rule is a core constant or a field
of the session's config. So in their code (comments and docstrings left out; Rust up to
its `#[cfg(test)]`):

1. a name about time or retries (timeout, interval, idle, backoff, retry, wait, deadline,
   delay, ttl, period) bound or defaulted to a number: `timeout = 10.0`, `idleMs ?? 1000`;
2. a sleep or a timer of a literal length: `time.sleep(0.5)`, `setTimeout(f, 100)`,
   `Duration::from_secs(2)`;
3. an HTTP status other than 200 (a stream that opened, which the transport must know
   to hand its body on in pieces): `status == 503`;

are reported, one `file:line: why` each. A line that says `decisions: ok` (a comment,
with the reason), or follows one that does, is not: for transport facts, such as the
statuses that have no body.

The ZooKeeper shells are sessions of the core too since issue 35 (they move TCP bytes), and
are checked like the rest; `EXEMPT` names a file that is not, with the reason, should one
ever be.

And it counts: the code lines (no blank, comment or docstring line; Rust up to its
`#[cfg(test)]`) of the source shells (etcd, HTTP, ZooKeeper) against
the core's source sessions, and fails above `MOST_TIMES` (issue 35's target: 4 times;
13.6 before it).

    python3 scripts/check-shell-decisions.py            # the shells below, and the count
    python3 scripts/check-shell-decisions.py FILE...    # those files only
"""

from __future__ import annotations

import io
import os
import re
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELLS = [
    "bindings-py/python/shardroute/etcd.py",
    "bindings-py/python/shardroute/http.py",
    "bindings-py/python/shardroute/_sources.py",
    "bindings-py/python/shardroute/redis.py",
    "bindings-js/etcd.mjs",
    "bindings-js/http.mjs",
    "bindings-js/shared.mjs",
    "bindings-node/redis.js",
    "bindings-py/python/shardroute/zookeeper.py",
    "bindings-node/zookeeper.js",
    "cli/src/source.rs",
    "cli/src/distribute.rs",
    "cli/src/tls.rs",
]
# A shell that is not a core session yet, with the reason (none since issue 35).
EXEMPT: dict[str, str] = {}
# The source shells and the core's source sessions, for the count.
SOURCE_SHELLS = [
    "bindings-py/python/shardroute/etcd.py", "bindings-py/python/shardroute/http.py",
    "bindings-py/python/shardroute/_sources.py", "bindings-py/python/shardroute/zookeeper.py",
    "bindings-js/etcd.mjs", "bindings-js/http.mjs", "bindings-js/shared.mjs", "bindings-node/zookeeper.js",
    "cli/src/distribute.rs", "cli/src/source.rs", "cli/src/tls.rs", "cli/src/wire.rs",
]
CORE_SESSIONS = [
    "core/src/session/source.rs", "core/src/session/follower.rs", "core/src/session/etcd.rs",
    "core/src/session/etcd/codec.rs", "core/src/session/etcd/calls.rs", "core/src/session/http.rs",
    "core/src/session/zookeeper.rs", "core/src/session/zookeeper/codec.rs",
]
MOST_TIMES = 4.0
TIME_NAME = r"[A-Za-z_]*(?:timeout|interval|idle|backoff|retr(?:y|ies)|wait|deadline|delay|ttl|period)[A-Za-z_]*"
RULES = [
    (re.compile(rf"(?i)\b{TIME_NAME}(?:\s*:\s*[A-Za-z_][\w\[\], |.]*)?\s*(?:=|:|\?\?|\|\||or)\s*(?:\(?\s*)-?\d"),
     "a time or retry bound to a number"),
    (re.compile(r"\b(?:sleep|setTimeout|setInterval|call_later|Timer)\s*\([^)]*?[,(]\s*\d+(?:\.\d+)?\s*\)"),
     "a sleep or timer of a literal length"),
    (re.compile(r"\bsleep\s*\(\s*\d"), "a sleep of a literal length"),
    (re.compile(r"Duration::from_(?:secs|millis|micros|nanos)(?:_f64)?\(\s*\d"), "a literal Duration"),
    (re.compile(r"(?<![\w.])(?:1\d\d|20[1-9]|2[1-9]\d|[3-5]\d\d)(?![\w.])"), "an HTTP status that means something"),
]
ALLOWED = "decisions: ok"


def python_code(text: str) -> list[str]:
    """`text`'s lines with comments and docstrings blanked."""
    lines = text.splitlines()
    blank: set[int] = set()
    previous = tokenize.INDENT
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, col = token.start
                if ALLOWED not in token.string:
                    lines[row - 1] = lines[row - 1][:col]
            elif token.type == tokenize.STRING and previous in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE,
                                                                   tokenize.NL):
                blank.update(range(token.start[0], token.end[0] + 1))
            if token.type not in (tokenize.COMMENT, tokenize.NL):
                previous = token.type
    except tokenize.TokenError:
        pass
    return ["" if number + 1 in blank else line for number, line in enumerate(lines)]


def c_like_code(text: str, rust: bool) -> list[str]:
    """`text`'s lines with `//` and `/* */` comments blanked (Rust: up to `#[cfg(test)]`)."""
    out: list[str] = []
    in_block = False
    for line in text.splitlines():
        if rust and line.startswith("#[cfg(test)]"):
            break
        keep = ALLOWED in line
        if in_block:
            end = line.find("*/")
            if end < 0:
                out.append("")
                continue
            line, in_block = line[end + 2:], False
        line = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in line:
            line, in_block = line[: line.index("/*")], True
        # A `//` outside a string: good enough for these files (URLs are in strings,
        # written `http:` + `//`, which is what the quote check skips).
        match = re.search(r"(?<![:'\"])//", line)
        if match:
            line = line[: match.start()]
        out.append(line + (f" {ALLOWED}" if keep else ""))
    return out


def code_lines(path: str) -> int:
    """How many lines of `path` hold code (a Rust `mod tests;` declaration is not the end)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as file:
        text = file.read().replace("#[cfg(test)]\nmod tests;", "")
    lines = python_code(text) if path.endswith(".py") else c_like_code(text, path.endswith(".rs"))
    return sum(1 for line in lines if line.strip())


def count() -> bool:
    """Prints the shells' code lines against the core's: True when within `MOST_TIMES`."""
    shells = {path: code_lines(path) for path in SOURCE_SHELLS}
    core = {path: code_lines(path) for path in CORE_SESSIONS}
    ratio = sum(shells.values()) / sum(core.values())
    print("source shells:", ", ".join(f"{os.path.basename(path)} {n}" for path, n in shells.items()),
          f"= {sum(shells.values())} code lines")
    print("core sessions:", ", ".join(f"{os.path.basename(path)} {n}" for path, n in core.items()),
          f"= {sum(core.values())} code lines")
    print(f"check-shell-decisions: the shells are {ratio:.2f} times the core (at most {MOST_TIMES:g})")
    return ratio <= MOST_TIMES


def findings(path: str) -> list[str]:
    with open(os.path.join(ROOT, path), encoding="utf-8") as file:
        text = file.read()
    if path.endswith(".py"):
        lines = python_code(text)
    else:
        lines = c_like_code(text, path.endswith(".rs"))
    raw = text.splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        if ALLOWED in line or ALLOWED in raw[number - 1] or (number > 1 and ALLOWED in raw[number - 2]):
            continue
        # Strings are the messages and the protocol's words, not decisions: left out.
        code = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`", '""', line)
        for pattern, why in RULES:
            if pattern.search(code):
                found.append(f"{path}:{number}: {why}: {raw[number - 1].strip()[:120]}")
                break
    return found


def main(argv: list[str]) -> int:
    paths = argv or SHELLS
    problems: list[str] = []
    for path in paths:
        path = os.path.relpath(os.path.abspath(path), ROOT) if os.path.exists(path) else path
        if path in EXEMPT:
            print(f"{path}: exempt: {EXEMPT[path]}")
            continue
        problems += findings(path)
    for problem in problems:
        print(problem)
    if not argv:
        for path, why in EXEMPT.items():
            print(f"{path}: exempt: {why}")
    print(f"check-shell-decisions: {len(problems)} finding(s) in {len(paths)} shell file(s)")
    within = count() if not argv else True
    return 1 if problems or not within else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
