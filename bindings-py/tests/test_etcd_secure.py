"""`shardroute.etcd` against a real etcd with TLS and authentication (issue 35, item 4 and
item 5): one member started by scripts/etcd_secure.py (a throwaway CA, a server
certificate for 127.0.0.1, a client certificate it requires, users root and
`shardroute`, `auth enable`), stopped by PID.

- follow, publish and repair (`replace=True`) over https with the client certificate and
  a password, sync and asyncio;
- a wrong password is `unauthenticated`; no client certificate, or a CA that is not the
  server's, is `unreachable` (the TLS handshake fails); no user is etcd's HTTP 403;
- a token etcd no longer knows (the user deleted and added again; a token past a short
  `--auth-token-ttl`) is renewed: calls and the follower go on, with no error reported.

No timed assertions: waits are bounded generously and assert on what happened.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

import shardroute
from shardroute._sources import SyncDriver
from shardroute.etcd import AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdError, EtcdFollower, publish, publish_async

_spec = importlib.util.spec_from_file_location(
    "etcd_secure", os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "etcd_secure.py"))
assert _spec is not None and _spec.loader is not None
etcd_secure: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(etcd_secure)

KEY = "/secure/topology"
#: Generous bound on a wait for something the client does (a slow, shared machine).
LONG_S = 30.0


def document(epoch: int, nodes: int = 3) -> shardroute.Topology:
    return {
        "format": "shardroute/1", "epoch": epoch,
        "nodes": [{"id": f"n{i}"} for i in range(nodes)], "strategy": {"type": "jump"},
    }


def options(info: dict[str, Any], **changed: Any) -> dict[str, Any]:
    """The client options of the secure etcd: its CA, the client certificate, the user."""
    every = {"ca_file": info["ca_file"], "cert_file": info["cert_file"], "key_file": info["key_file"],
             "user": info["user"], "password": info["password"]}
    return {**every, **changed}


@pytest.fixture(scope="module")
def secure() -> Iterator[Any]:
    with etcd_secure.SecureEtcd() as running:
        yield running


@pytest.fixture
def etcd(secure: Any) -> Iterator[Etcd]:
    client = Etcd(secure.url, **options(secure.info))
    client.delete_prefix("/secure/")
    yield client
    client.delete_prefix("/secure/")


def requested(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URL of every request the sync clients make from now on."""
    urls: list[str] = []
    real = SyncDriver._perform

    def perform(self: SyncDriver, request: dict[str, Any], flight: Any) -> None:
        urls.append(request["url"])
        real(self, request, flight)

    monkeypatch.setattr(SyncDriver, "_perform", perform)
    return urls


def test_follow_publish_and_replace_over_tls_with_a_password(etcd: Etcd) -> None:
    assert etcd.url.startswith("https://")
    refused: list[str] = []
    errors: list[Exception] = []
    with EtcdFollower(etcd, KEY, on_refused=lambda _, offered: refused.append(offered.code or ""),
                      on_error=errors.append) as follower:
        assert follower.router is None
        for epoch in (1, 2):
            publish(etcd, KEY, document(epoch))
            assert follower.wait_for_epoch(epoch, timeout=LONG_S)
        # A stored document every follower refuses (no nodes; it says epoch 9).
        etcd.put(KEY, json.dumps({**document(9), "nodes": []}))
        ends = time.monotonic() + LONG_S
        while not refused and time.monotonic() < ends:
            time.sleep(0.02)
        assert refused == ["no_nodes"]
        router = follower.router
        assert router is not None and router.epoch == 2  # kept
        # publish does not overwrite it...
        with pytest.raises(shardroute.ShardrouteError) as kept:
            publish(etcd, KEY, document(3))
        assert kept.value.code == "no_nodes" and "replace" in str(kept.value)
        # ...replace does, with an epoch above the stored one's 9 (and the followers' 2).
        with pytest.raises(shardroute.ShardrouteError) as low:
            publish(etcd, KEY, document(5), replace=True)
        assert low.value.code == "stale_epoch"
        revision = publish(etcd, KEY, document(10), replace=True)
        assert follower.wait_for_epoch(10, timeout=LONG_S)
        assert follower.revision == revision == etcd.get(KEY)[1]
        # A stored value that is not JSON: the epoch to beat is the newest one a follower
        # would install, read back through the key's history (10).
        etcd.put(KEY, "{not json")
        with pytest.raises(shardroute.ShardrouteError) as same:
            publish(etcd, KEY, document(10), replace=True)
        assert same.value.code == "stale_epoch"
        publish(etcd, KEY, document(11), replace=True)
        assert follower.wait_for_epoch(11, timeout=LONG_S)
        # Back to the rule: the next document is epoch + 1.
        publish(etcd, KEY, document(12), also={"/secure/previous": json.dumps(document(11))})
        assert follower.wait_for_epoch(12, timeout=LONG_S)
        assert etcd.get("/secure/previous")[0] == json.dumps(document(11))
    assert errors == []


def test_the_asyncio_follower_over_tls_with_a_password(secure: Any, etcd: Etcd) -> None:
    async def main() -> list[int]:
        client = AsyncEtcd(secure.url, **options(secure.info))
        await publish_async(client, KEY, document(1))
        seen: list[int] = []
        errors: list[Exception] = []
        follower = await AsyncEtcdFollower.start(
            client, KEY, also=["/secure/previous"], on_error=errors.append,
            on_change=lambda f: seen.append(f.router.epoch if f.router else 0))
        async with follower:
            assert follower.router is not None and follower.router.epoch == 1
            await client.put(KEY, "{garbage")
            with pytest.raises(shardroute.ShardrouteError) as kept:
                await publish_async(client, KEY, document(2))
            assert kept.value.code == "invalid_topology"
            await publish_async(client, KEY, document(2), also={"/secure/previous": "p"}, replace=True)
            assert await follower.wait_for_epoch(2, timeout=LONG_S)
            assert follower.companions == {"/secure/previous": "p"}
        assert errors == []
        return seen

    assert asyncio.run(main()) == [1, 2]


def test_a_wrong_password_is_unauthenticated(secure: Any) -> None:
    wrong = options(secure.info, password="not the password")
    with pytest.raises(EtcdError) as raised:
        Etcd(secure.url, **wrong).get(KEY)
    assert raised.value.code == "unauthenticated"
    with pytest.raises(EtcdError) as follower:
        EtcdFollower(Etcd(secure.url, **wrong), KEY)
    assert follower.value.code == "unauthenticated"
    with pytest.raises(EtcdError) as asyncio_raised:
        asyncio.run(AsyncEtcd(secure.url, **wrong).get(KEY))
    assert asyncio_raised.value.code == "unauthenticated"
    with pytest.raises(EtcdError) as asyncio_follower:
        asyncio.run(AsyncEtcdFollower.start(AsyncEtcd(secure.url, **wrong), KEY))
    assert asyncio_follower.value.code == "unauthenticated"


def test_tls_failures_and_no_user(secure: Any) -> None:
    for name, changed in (("no client certificate", {"cert_file": None, "key_file": None}),
                          ("not the server's CA", {"ca_file": None})):
        with pytest.raises(EtcdError) as raised:
            Etcd(secure.url, **options(secure.info, **changed)).get(KEY)
        assert raised.value.code == "unreachable", name
        with pytest.raises(EtcdError) as asyncio_raised:
            asyncio.run(AsyncEtcd(secure.url, **options(secure.info, **changed)).get(KEY))
        assert asyncio_raised.value.code == "unreachable", name
    with pytest.raises(EtcdError) as anonymous:
        Etcd(secure.url, **options(secure.info, user=None, password=None)).get(KEY)
    assert (anonymous.value.code, anonymous.value.status) == ("http", 403)


def test_a_token_etcd_dropped_is_renewed(secure: Any, etcd: Etcd, monkeypatch: pytest.MonkeyPatch) -> None:
    urls = requested(monkeypatch)
    errors: list[Exception] = []
    publish(etcd, KEY, document(1))
    with EtcdFollower(etcd, KEY, on_error=errors.append) as follower:
        assert follower.wait_for_epoch(1, timeout=LONG_S)
        before = sum(url.endswith("/v3/auth/authenticate") for url in urls)
        assert before == 1  # the follower's session's token (the client had one already)
        # Deleting the user drops its tokens; added again, it may sign in again.
        secure.admin("/v3/auth/user/delete", {"name": secure.info["user"]})
        secure.add_user()
        publish(etcd, KEY, document(2))  # the client's token is renewed
        assert follower.wait_for_epoch(2, timeout=LONG_S)  # from the watch's event: no read
        follower.refresh()  # the follower's next read renews its token
        assert json.loads(etcd.get(KEY)[0] or "")["epoch"] == 2
    assert errors == []
    assert sum(url.endswith("/v3/auth/authenticate") for url in urls) == before + 2


def test_an_expired_token_is_renewed(monkeypatch: pytest.MonkeyPatch) -> None:
    urls = requested(monkeypatch)
    with etcd_secure.SecureEtcd(auth_token_ttl=1) as short:
        client = Etcd(short.url, **options(short.info))
        client.put(KEY, "1")
        time.sleep(2.5)  # past the token's TTL: etcd forgets it
        assert client.get(KEY)[0] == "1"
        paths = [url.rsplit("/v3/", 1)[1] for url in urls]
        # The get was refused (invalid auth token), a token taken again, the get resent.
        assert paths == ["auth/authenticate", "kv/put", "kv/range", "auth/authenticate", "kv/range"], paths

        async def main() -> str | None:
            async_client = AsyncEtcd(short.url, **options(short.info))
            await async_client.put(KEY, "2")
            await asyncio.sleep(2.5)
            return (await async_client.get(KEY))[0]

        assert asyncio.run(main()) == "2"
