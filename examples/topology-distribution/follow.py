"""One follower of the live run, as a service would run it: follows the topology at
`--key` in the etcd cluster `--etcd` (every member's URL, comma-separated), or at
`--path` in the ZooKeeper ensemble `--zookeeper` (`host:port,...`), and prints one
JSON line per installed epoch (`{"event": "installed", "epoch", "t"}`, `t` the wall clock
in seconds) and per refusal (`{"event": "refused", "code"}`). `stats` on stdin prints
`{"event": "stats", "stats", "member"}` (its counters now, and the etcd member in use);
`quit` prints `{"event": "done", "stats", "member"}` and exits.

    python follow.py --etcd http://127.0.0.1:2379,... --key /app/topology [--asyncio | --raw]
        [--ca CA.pem --cert CLIENT.pem --cert-key CLIENT.key] [--user NAME --password-file FILE]
    python follow.py --zookeeper 127.0.0.1:2181,... --path /app/topology [--asyncio | --raw]

A secure etcd (`https://` members): `--ca` the CA its certificates are checked against,
`--cert`/`--cert-key` the client certificate it asks for, `--user` and the password (read
from `--password-file`, not the command line) for etcd's authentication.

`--raw` is the baseline the targets compare with: a bare etcd watch (no follower, no read,
no shardroute: `RawEtcd`, the standard library's http.client), or a bare kazoo data watch,
printing the epoch of each value as the watch delivers it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import ssl
import sys
import threading
import time
import urllib.parse
from typing import Any

from kazoo.client import KazooClient  # type: ignore[import-untyped]

from shardroute.etcd import AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdFollower
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


def security(args: argparse.Namespace) -> dict[str, Any]:
    """The secure etcd's options for `Etcd` and `AsyncEtcd` (none for a plain one)."""
    options: dict[str, Any] = {}
    if args.ca:
        options.update(ca_file=args.ca, cert_file=args.cert, key_file=args.cert_key)
    if args.user:
        with open(args.password_file) as secret:
            options.update(user=args.user, password=secret.read().strip())
    return options


def member(follower: Any) -> str | None:
    """The etcd member the follower's client uses now, or the ZooKeeper member of its session."""
    return getattr(getattr(follower, "etcd", None), "url", None) or getattr(follower, "member", None)


def until_quit(stats: Any, where: Any) -> None:
    """Answers `stats` on stdin until `quit` (or the end of stdin)."""
    for line in sys.stdin:
        if line.strip() != "stats":
            break
        emit("stats", stats=stats(), member=where())
    emit("done", stats=stats(), member=where())


def follow_sync(urls: str, key: str, options: dict[str, Any]) -> None:
    follower = EtcdFollower(Etcd(urls, timeout=TIMEOUT_S, **options), key, config=CONFIG, idle=IDLE_S,
                            on_change=installed, on_refused=refused)
    emit("ready")
    until_quit(lambda: follower.stats, lambda: member(follower))
    follower.close()


async def serve_until_quit(follower: Any) -> None:
    """An asyncio follower's life in this run: ready, the events, `stats` answered, then
    `quit` on stdin."""
    emit("ready")
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "stats":
        emit("stats", stats=follower.stats, member=member(follower))
    emit("done", stats=follower.stats, member=member(follower))
    await follower.close()


def follow_asyncio(urls: str, key: str, options: dict[str, Any]) -> None:
    async def main() -> None:
        await serve_until_quit(await AsyncEtcdFollower.start(
            AsyncEtcd(urls, timeout=TIMEOUT_S, **options), key, config=CONFIG, idle=IDLE_S, on_change=installed,
            on_refused=refused))

    asyncio.run(main())


class RawEtcd:
    """The baseline's own etcd client, standard library only, so that the baseline owes
    nothing to shardroute: one POST per call to the member in use, the next member on any
    failure (a 503 of a member going away too); with a user, a token from
    `/v3/auth/authenticate`, taken again when a member refuses it."""

    def __init__(self, urls: str, options: dict[str, Any]) -> None:
        self.members = [urllib.parse.urlsplit(url.strip()) for url in urls.split(",")]
        self.in_use = 0
        self.context: ssl.SSLContext | None = None
        if options.get("ca_file"):
            self.context = ssl.create_default_context(cafile=options["ca_file"])
            self.context.load_cert_chain(options["cert_file"], options["key_file"])
        self.user, self.password = options.get("user"), options.get("password")
        self.token: str | None = None
        self.requests = 0

    @property
    def url(self) -> str:
        return self.members[self.in_use].geturl()

    def open(self, path: str, body: dict[str, Any], timeout: float) -> http.client.HTTPResponse:
        """The answer of the member in use (status 200), else of the next, round the list
        once; OSError after the last."""
        for attempt in range(len(self.members)):
            try:
                return self._open_one(path, body, timeout)
            except OSError:
                self.token = None  # another member: a token again (a restarted one forgets it)
                self.in_use = (self.in_use + 1) % len(self.members)
                if attempt + 1 == len(self.members):
                    raise
        raise AssertionError("unreachable")

    def _open_one(self, path: str, body: dict[str, Any], timeout: float) -> http.client.HTTPResponse:
        if self.user and self.token is None and path != "/v3/auth/authenticate":
            answer = json.load(self._open_one("/v3/auth/authenticate", {"name": self.user, "password": self.password}, TIMEOUT_S))
            self.token = answer["token"]
        where = self.members[self.in_use]
        connection: http.client.HTTPConnection = (
            http.client.HTTPSConnection(where.hostname or "", where.port, timeout=timeout, context=self.context)
            if where.scheme == "https" else http.client.HTTPConnection(where.hostname or "", where.port, timeout=timeout))
        headers = {"Content-Type": "application/json", **({"Authorization": self.token} if self.token else {})}
        self.requests += 1
        try:
            connection.request("POST", path, json.dumps(body), headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as err:
            connection.close()
            raise OSError(f"{where.geturl()}{path}: {err}") from err
        if response.status != 200:
            text = response.read(4096)
            connection.close()
            raise OSError(f"{where.geturl()}{path}: HTTP {response.status} {text[:200]!r}")
        return response

    def mod_revision(self, key: str) -> int:
        kvs = json.load(self.open("/v3/kv/range", {"key": b64(key)}, TIMEOUT_S)).get("kvs") or []
        return int(kvs[0]["mod_revision"]) if kvs else 0


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def follow_raw(urls: str, key: str, options: dict[str, Any]) -> None:
    etcd = RawEtcd(urls, options)
    seen = [0]

    def run() -> None:
        start = None
        while True:
            try:
                # A read first (linearizable: a member without quorum fails it and is left),
                # the first time for the revision to watch from, then after each stream.
                revision = etcd.mod_revision(key)
                start = revision + 1 if start is None else start
                # Nothing for IDLE_S: the stream is given up (a silent member) and opened again.
                stream = etcd.open("/v3/watch", {"create_request": {"key": b64(key), "start_revision": str(start)}}, IDLE_S)
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.05)  # no member answered: not a busy loop
                continue
            try:
                with stream:
                    for line in stream:
                        events = json.loads(line).get("result", {}).get("events") or []
                        for event in events:
                            start = int(event["kv"]["mod_revision"]) + 1
                            try:
                                epoch = json.loads(base64.b64decode(event["kv"].get("value", "")))["epoch"]
                            except (ValueError, KeyError, TypeError):
                                continue
                            if isinstance(epoch, int) and epoch > seen[0]:
                                seen[0] = epoch
                                emit("installed", epoch=epoch, t=time.time())
            except (OSError, http.client.HTTPException, ValueError):
                pass  # quiet or broken: read, and open it again

    threading.Thread(target=run, daemon=True).start()
    emit("ready")
    until_quit(lambda: {"requests": etcd.requests}, lambda: etcd.url)


def zookeeper_client(hosts: str) -> KazooClient:
    client = KazooClient(hosts=hosts, timeout=SESSION_S)
    client.start(timeout=30)
    return client


def follow_zookeeper(hosts: str, path: str) -> None:
    follower = ZooKeeperFollower(hosts, path, config=CONFIG, timeout=SESSION_S, on_change=installed, on_refused=refused)
    emit("ready")
    until_quit(lambda: follower.stats, lambda: member(follower))
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
    until_quit(dict, lambda: None)
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
    parser.add_argument("--ca", help="a secure etcd's CA certificate (PEM)")
    parser.add_argument("--cert", help="the client certificate it asks for (PEM)")
    parser.add_argument("--cert-key", help="that certificate's key (PEM)")
    parser.add_argument("--user", help="etcd's authentication: the user")
    parser.add_argument("--password-file", help="etcd's authentication: a file holding the password")
    args = parser.parse_args()
    if args.zookeeper:
        follow = follow_zookeeper_asyncio if args.asyncio else follow_zookeeper_raw if args.raw else follow_zookeeper
        follow(args.zookeeper, args.path)
    else:
        follow_etcd = follow_asyncio if args.asyncio else follow_raw if args.raw else follow_sync
        follow_etcd(args.etcd, args.key, security(args))


if __name__ == "__main__":
    main()
