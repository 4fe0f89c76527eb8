"""Every ```python block of the package's README.md (and of docs/guide.md and
docs/choosing.md: DOCUMENTS) runs, as a user would paste it.

A block's fence is ```python, then optionally the one server it needs: ```python redis,
```python etcd, ```python zookeeper or ```python http. Blocks without a server run in
order in one namespace per document (a later one may use an earlier one's `router`),
each compiled at its line of its file, so a traceback points into the document. A block
that needs a server runs against the project's own, started by the fixtures the live tests
use (examples/redis-cluster/cluster.py, examples/harness.py), with the placeholder address
the block shows (PLACEHOLDERS) replaced by the server's. `SHARDROUTE_TIER=check` (`make
check`, which starts no server) skips those.

A block that cannot run here is listed in NOT_RUN with a line it contains and the
reason (a fragment of a longer text, say); the test fails when an entry matches no block
or more than one, or when a fence names anything else.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
README = ROOT / "bindings-py" / "README.md"
#: The documents whose blocks run, and the least count of blocks without a server in each.
DOCUMENTS = {README: 10, ROOT / "docs" / "guide.md": 0, ROOT / "docs" / "choosing.md": 5}
EXAMPLES = ROOT / "examples"

#: The address each server's blocks show, replaced by the running server's.
PLACEHOLDERS = {
    "redis": "127.0.0.1:7000",
    "etcd": "http://127.0.0.1:2379",
    "zookeeper": "127.0.0.1:2181",
    "http": "http://127.0.0.1:8080/topology.json",
}
#: Blocks not run: (document, a line of the block, why it is not run).
NOT_RUN: list[tuple[Path, str, str]] = [
    (ROOT / "docs" / "choosing.md", '"shards": measured_shards, "keys": measured_keys})',
     "a fragment: the options of suggest, over measurements the text does not give"),
]
LIVE = os.environ.get("SHARDROUTE_TIER") != "check"


@dataclass
class Block:
    path: Path
    line: int  # of the block's first line of code, 1-based
    tag: str  # "" or the server it needs
    code: str

    def compiled(self, code: str | None = None) -> Any:
        # Blank lines before the code: line numbers in tracebacks are README.md's.
        return compile("\n" * (self.line - 1) + (self.code if code is None else code), str(self.path), "exec")

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path | None = None) -> list[Block]:
    """The ```python blocks of one document, or of every one."""
    if path is None:
        return [block for document in DOCUMENTS for block in blocks(document)]
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fence: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.startswith("```"):
            body.append(line)
            continue
        info = line[3:].strip().split()
        if fence is None:
            if info[:1] == ["python"]:
                assert len(info) <= 2, f"{path}:{number}: one word after python"
                fence = (number + 1, info[1] if len(info) == 2 else "")
            else:
                fence = (number + 1, "other")
            body = []
        else:
            if fence[1] != "other":
                found.append(Block(path, fence[0], fence[1], "".join(body)))
            fence = None
    assert fence is None, f"{path} ends inside a code block"
    return found


def not_run(block: Block) -> bool:
    return any(path == block.path and line in block.code for path, line, _ in NOT_RUN)


def of(tag: str, path: Path | None = None) -> list[Block]:
    """The blocks that run, fenced with `tag`."""
    return [block for block in blocks(path) if block.tag == tag and not not_run(block)]


def run_live(tag: str, address: str) -> None:
    chosen = of(tag)
    assert [block for block in chosen if block.path == README], f"README.md has no ```python {tag} block"
    for block in chosen:
        assert PLACEHOLDERS[tag] in block.code, f"{block.where}: the block shows no {PLACEHOLDERS[tag]}"
        exec(block.compiled(block.code.replace(PLACEHOLDERS[tag], address)), {"__name__": "__readme__"})


def test_every_fence_is_known_and_the_not_run_list_is_the_readmes() -> None:
    tags = {block.tag for block in blocks()}
    assert tags <= {"", *PLACEHOLDERS}, tags
    for path, line, _ in NOT_RUN:
        assert len([block for block in blocks(path) if line in block.code]) == 1, (path, line)
    for path, least in DOCUMENTS.items():
        assert len(of("", path)) >= least, path  # the sections without a server


def test_the_blocks_without_a_server_run_in_order() -> None:
    for path in DOCUMENTS:
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        for block in of("", path):
            exec(block.compiled(), namespace)


needs_servers = pytest.mark.skipif(not LIVE, reason="SHARDROUTE_TIER=check starts no server (make test runs these)")


@needs_servers
def test_the_redis_blocks_run_against_a_redis_cluster() -> None:
    sys.path.insert(0, str(EXAMPLES / "redis-cluster"))
    from cluster import Cluster

    with Cluster() as cluster:
        run_live("redis", cluster.seed().address)


@pytest.fixture
def scratch() -> Iterator[str]:
    root = tempfile.mkdtemp(prefix="shardroute-readme-")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@needs_servers
def test_the_etcd_blocks_run_against_etcd(scratch: str) -> None:
    sys.path.insert(0, str(EXAMPLES))
    from harness import EtcdServer

    server = EtcdServer(scratch, name="readme")
    try:
        run_live("etcd", server.url)
    finally:
        server.stop()


@needs_servers
def test_the_zookeeper_blocks_run_against_zookeeper(scratch: str) -> None:
    sys.path.insert(0, str(EXAMPLES))
    from harness import ZooKeeperServer

    server = ZooKeeperServer(scratch, name="readme")
    try:
        run_live("zookeeper", server.hosts)
    finally:
        server.stop()


def test_the_http_blocks_run_against_an_http_server() -> None:
    # In process (examples/harness.py's TopologyHttpServer), so `make check` runs it too.
    sys.path.insert(0, str(EXAMPLES))
    from harness import TopologyHttpServer

    server = TopologyHttpServer()
    try:
        server.set('{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}')
        run_live("http", server.url)
    finally:
        server.stop()
