"""One follower of the live run, as a service would run it: follows the topology at
`--key` in the etcd cluster `--etcd` (every member's URL, comma-separated), or at
`--path` in the ZooKeeper ensemble `--zookeeper` (`host:port,...`), and prints one
JSON line per installed epoch (`{"event": "installed", "epoch", "t"}`, `t` the wall clock
in seconds) and per refusal (`{"event": "refused", "code"}`). `quit` on stdin prints
`{"event": "done", "stats"}` and exits.

    python follow.py --etcd http://127.0.0.1:2379,... --key /app/topology [--asyncio | --raw]
    python follow.py --zookeeper 127.0.0.1:2181,... --path /app/topology [--asyncio | --raw]

`--raw` is the baseline the targets compare with: a bare etcd watch (no follower, no read),
or a bare kazoo data watch, printing the epoch of each value as the watch delivers it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from typing import Any

from kazoo.client import KazooClient  # type: ignore[import-untyped]

from shardroute.etcd import AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdError, EtcdFollower
from shardroute.zookeeper import AsyncZooKeeperFollower, ZooKeeperFollower

CONFIG: Any = {"reconnect_first_ms": 50, "reconnect_max_ms": 500}
IDLE_S = 1.0
TIMEOUT_S = 1.0
SESSION_S = 2.0  # ZooKeeper's session timeout: a silent member is left after two thirds of it


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def installed(follower: Any) -> None:
    emit("installed", epoch=follower.router.epoch, t=time.time())


def refused(_: Any, offered: Any) -> None:
    emit("refused", code=offered.code)


def follow_sync(urls: str, key: str) -> None:
    follower = EtcdFollower(Etcd(urls, timeout=TIMEOUT_S), key, config=CONFIG, idle=IDLE_S,
                            on_change=installed, on_refused=refused)
    emit("ready")
    sys.stdin.readline()
    emit("done", stats=follower.stats)
    follower.close()


async def serve_until_quit(follower: Any) -> None:
    """An asyncio follower's life in this run: ready, the events, then `quit` on stdin."""
    emit("ready")
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    emit("done", stats=follower.stats)
    await follower.close()


def follow_asyncio(urls: str, key: str) -> None:
    async def main() -> None:
        await serve_until_quit(await AsyncEtcdFollower.start(
            AsyncEtcd(urls, timeout=TIMEOUT_S), key, config=CONFIG, idle=IDLE_S, on_change=installed, on_refused=refused))

    asyncio.run(main())


def follow_raw(urls: str, key: str) -> None:
    etcd = Etcd(urls, timeout=TIMEOUT_S)
    seen = [0]

    def run() -> None:
        start = etcd.get(key)[1] + 1
        while True:
            try:
                with etcd.watch(key, start_revision=start, idle=IDLE_S) as watch:
                    for events in watch:
                        for event in events:
                            start = event["mod_revision"] + 1
                            try:
                                epoch = json.loads(event["value"] or "")["epoch"]
                            except (ValueError, KeyError, TypeError):
                                continue
                            if isinstance(epoch, int) and epoch > seen[0]:
                                seen[0] = epoch
                                emit("installed", epoch=epoch, t=time.time())
            except EtcdError:
                try:
                    etcd.get(key)  # moves to a member that answers
                except EtcdError:
                    time.sleep(0.05)

    threading.Thread(target=run, daemon=True).start()
    emit("ready")
    sys.stdin.readline()
    emit("done", stats={})


def zookeeper_client(hosts: str) -> KazooClient:
    client = KazooClient(hosts=hosts, timeout=SESSION_S)
    client.start(timeout=30)
    return client


def follow_zookeeper(hosts: str, path: str) -> None:
    follower = ZooKeeperFollower(hosts, path, config=CONFIG, timeout=SESSION_S, on_change=installed, on_refused=refused)
    emit("ready")
    sys.stdin.readline()
    emit("done", stats=follower.stats)
    follower.close()


def follow_zookeeper_asyncio(hosts: str, path: str) -> None:
    async def main() -> None:
        await serve_until_quit(await AsyncZooKeeperFollower.start(
            hosts, path, config=CONFIG, timeout=SESSION_S, on_change=installed, on_refused=refused))

    asyncio.run(main())


def follow_zookeeper_raw(hosts: str, path: str) -> None:
    client = zookeeper_client(hosts)
    seen = [0]

    def changed(data: bytes | None, *_: Any) -> None:
        try:
            epoch = json.loads(data or b"")["epoch"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(epoch, int) and epoch > seen[0]:
            seen[0] = epoch
            emit("installed", epoch=epoch, t=time.time())

    client.DataWatch(path, changed)
    emit("ready")
    sys.stdin.readline()
    emit("done", stats={})
    client.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--etcd")
    parser.add_argument("--key")
    parser.add_argument("--zookeeper")
    parser.add_argument("--path")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--asyncio", action="store_true")
    mode.add_argument("--raw", action="store_true")
    args = parser.parse_args()
    if args.zookeeper:
        follow = follow_zookeeper_asyncio if args.asyncio else follow_zookeeper_raw if args.raw else follow_zookeeper
        follow(args.zookeeper, args.path)
    elif args.asyncio:
        follow_asyncio(args.etcd, args.key)
    elif args.raw:
        follow_raw(args.etcd, args.key)
    else:
        follow_sync(args.etcd, args.key)


if __name__ == "__main__":
    main()
