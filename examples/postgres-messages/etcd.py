"""A small etcd v3 client over etcd's JSON gateway (`/v3/kv/...`, `/v3/watch`).

Standard library only, so the example's topology store depends on nothing but etcd
itself. Keys and values travel base64-encoded, revisions as decimal strings; this
module hides both: keys and values are `str`, revisions `int`.

    client = Etcd("http://127.0.0.1:2379")
    client.put("/a", "1")
    value, revision = client.get("/a")           # ("1", mod_revision) or (None, 0)
    client.cas("/a", "2", revision)              # the new revision; 0 if someone wrote /a since
    client.watch("/a", lambda: print("changed")) # a thread; calls back on every change
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def prefix_end(prefix: str) -> str:
    """The end of the range of keys that start with `prefix` (etcd's `range_end`)."""
    raw = bytearray(prefix.encode())
    while raw and raw[-1] == 0xFF:
        raw.pop()
    raw[-1] += 1
    return raw.decode("latin-1")


class EtcdError(RuntimeError):
    """etcd answered with an error, or could not be reached."""


class Etcd:
    """One etcd endpoint (`http://host:port`)."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as err:
            raise EtcdError(f"{path}: HTTP {err.code}: {err.read()[:500]!r}") from err
        except (urllib.error.URLError, OSError) as err:
            raise EtcdError(f"{path}: {err}") from err
        return answer

    # -- reads and writes -----------------------------------------------------------

    def get(self, key: str) -> tuple[str | None, int]:
        """The value of `key` and its `mod_revision`, or `(None, 0)` when absent."""
        kvs = self.call("/v3/kv/range", {"key": _b64(key)}).get("kvs", [])
        if not kvs:
            return None, 0
        return _unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])

    def get_many(self, keys: list[str]) -> tuple[dict[str, tuple[str | None, int]], int]:
        """Several keys read in one transaction, so at one revision:
        `({key: (value, mod_revision)}, revision)`."""
        answer = self.call("/v3/kv/txn", {"success": [{"request_range": {"key": _b64(key)}} for key in keys]})
        found: dict[str, tuple[str | None, int]] = {}
        for key, response in zip(keys, answer["responses"]):
            kvs = response["response_range"].get("kvs", [])
            found[key] = (_unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])) if kvs else (None, 0)
        return found, int(answer["header"]["revision"])

    def put(self, key: str, value: str) -> int:
        """Writes `key`; returns the new revision."""
        return int(self.call("/v3/kv/put", {"key": _b64(key), "value": _b64(value)})["header"]["revision"])

    def delete_prefix(self, prefix: str) -> int:
        answer = self.call("/v3/kv/deleterange", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})
        return int(answer.get("deleted", 0))

    # -- compare-and-swap -----------------------------------------------------------

    def txn(
        self,
        compare: list[dict[str, Any]],
        puts: dict[str, str],
        deletes: tuple[str, ...] = (),
    ) -> int:
        """All of `puts` and `deletes` in one transaction, when every `compare` holds:
        the new revision, or 0 when a compare failed (nothing written). Build the
        compares with `same_revision` and `same_value`."""
        success: list[dict[str, Any]] = [
            {"request_put": {"key": _b64(key), "value": _b64(value)}} for key, value in puts.items()
        ]
        success += [{"request_delete_range": {"key": _b64(key)}} for key in deletes]
        answer = self.call("/v3/kv/txn", {"compare": compare, "success": success})
        return int(answer["header"]["revision"]) if answer.get("succeeded", False) else 0

    def cas(self, key: str, value: str, mod_revision: int) -> int:
        """Writes `key` only if its `mod_revision` is still the one read (0: absent);
        the new revision, or 0 when someone wrote it since."""
        return self.txn([same_revision(key, mod_revision)], {key: value})

    def cas_value(self, key: str, expected: str, value: str) -> int:
        """Writes `key` only if it still holds `expected` (the new revision, or 0)."""
        return self.txn([same_value(key, expected)], {key: value})

    # -- watch ----------------------------------------------------------------------

    def watch(
        self,
        key: str,
        on_change: Callable[[], None],
        range_end: str | None = None,
        stop: threading.Event | None = None,
        start_revision: int = 0,
    ) -> threading.Thread:
        """A daemon thread that calls `on_change()` after every change of `key` (or of
        the keys in `[key, range_end)`) from `start_revision` on (0: from now). The
        stream is reopened after a failure, from the revision after the last one seen,
        with a call to `on_change` so a change missed meanwhile is not lost."""
        stop = stop or threading.Event()

        def run() -> None:
            start = start_revision
            while not stop.is_set():
                create: dict[str, Any] = {"key": _b64(key)}
                if range_end is not None:
                    create["range_end"] = _b64(range_end)
                if start:
                    create["start_revision"] = str(start)
                request = urllib.request.Request(
                    self.url + "/v3/watch",
                    data=json.dumps({"create_request": create}).encode(),
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=None) as stream:
                        for line in stream:
                            if stop.is_set():
                                return
                            result = json.loads(line).get("result", {})
                            events = result.get("events", [])
                            for event in events:
                                start = max(start, int(event["kv"]["mod_revision"]) + 1)
                            if events:
                                on_change()
                except (urllib.error.URLError, OSError, ValueError):
                    pass
                if stop.is_set():
                    return
                time.sleep(0.2)
                on_change()

        thread = threading.Thread(target=run, name=f"watch {key}", daemon=True)
        thread.start()
        return thread


def same_revision(key: str, mod_revision: int) -> dict[str, Any]:
    """A txn compare: `key`'s mod_revision is `mod_revision` (0: the key is absent)."""
    return {"key": _b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}


def same_value(key: str, value: str) -> dict[str, Any]:
    """A txn compare: `key` holds `value`."""
    return {"key": _b64(key), "target": "VALUE", "result": "EQUAL", "value": _b64(value)}
