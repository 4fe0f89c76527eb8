"""One shard's HTTP service: the messages of one database (`shard_N`) and nothing else.
It knows no topology: the edge worker (worker.mjs) routes, and every statement carries
the router epoch the worker chose it under, fenced by the shard as in
examples/postgres-messages (its `shards.py`, used here as it is: a statement whose epoch
is below the shard's `fence.min_epoch` is refused, 409, and the worker re-reads the
topology and retries).

    python shard_service.py --postgres 127.0.0.1:5432 --shard shard_3

| request | does |
|---|---|
| `GET /users/{id}/messages?epoch=E` | the user's messages here (`&full=1`: every column, for a lazy move) |
| `POST /users/{id}/messages?epoch=E` | `{"id", "body", "vbucket", "sender"}`: inserts one message (fenced write; an id already here is not inserted twice) |
| `GET /users/{id}/moved?epoch=E` | `{"moved": bool}`: the user's lazy move has arrived here |
| `POST /users/{id}/import?epoch=E` | `{"rows": [...]}`: a lazy move's copy, with the moved flag, in one transaction |
| `DELETE /users/{id}/messages?epoch=E` | a lazy move's last step: the user's rows deleted here (fenced write) |
| `POST /fence?epoch=E&user=U` | raises the fence to E (a lazy move's first step, for user U) |
| `GET /` | `{"shard"}` |

Every answer says which shard served it (`x-shard`); a refusal by the fence is `409
{"error": "fenced", "min_epoch"}`. Each request served (2xx) is logged, for run.py to
judge: `time kind user epoch via` per line (`via`: the `x-via` header, `workerd`, `deno`
or `direct`).

stdout: `{"event": "ready", "shard", "url"}`; stdin, one command a line: `log PATH`
(log to PATH from now on, the last file closed; `log` alone: stop logging; answers
`{"event": "logging", "path"}`), `quit`.
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import psycopg

from shards import COLUMNS, FENCE_OK, Fenced, Shards

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width: times sort as text
USER_PATH = re.compile(r"^/users/(\d{1,15})/(messages|moved|import)$")


class BadRequest(Exception):
    """400: the request is not one this service answers."""


def iso(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=timezone.utc)


class Pool:
    """Up to `size` connections to the one database (`Shards` over it), lent one per request."""

    def __init__(self, postgres: str, shard: str, size: int) -> None:
        self.postgres, self.shard = postgres, shard
        self.free: queue.LifoQueue[Shards | None] = queue.LifoQueue()
        for _ in range(size):
            self.free.put(None)

    @contextmanager
    def lend(self) -> Iterator[Shards]:
        shards = self.free.get() or Shards(self.postgres, [self.shard])
        broken = False
        try:
            yield shards
        except psycopg.OperationalError:
            broken = True  # a broken connection is not lent again
            raise
        finally:
            # Back in the pool whatever happened (a fence refusal, a bad request, ...).
            if broken:
                shards.close()
            self.free.put(None if broken else shards)

    def close(self) -> None:
        while not self.free.empty():
            shards = self.free.get_nowait()
            if shards is not None:
                shards.close()


class ShardService:
    def __init__(self, postgres: str, shard: str, pool: int) -> None:
        self.shard = shard
        self.pool = Pool(postgres, shard, pool)
        self.logging = threading.Lock()
        self.log: TextIO | None = None

    def set_log(self, path: str) -> None:
        """Served requests go to `path` from now on (none when empty); the last file is closed."""
        with self.logging:
            if self.log is not None:
                self.log.close()
            self.log = open(path, "a") if path else None

    def served(self, kind: str, user: int, epoch: int, via: str) -> None:
        with self.logging:
            if self.log is not None:
                self.log.write(f"{time.time():.6f}\t{kind}\t{user}\t{epoch}\t{via}\n")

    def close(self) -> None:
        with self.logging:
            if self.log is not None:
                self.log.close()
                self.log = None
        self.pool.close()

    def answer(self, method: str, target: str, body: Any, via: str) -> tuple[int, dict[str, Any]]:
        """One request: (status, JSON answer); logs it when served."""
        url = urlsplit(target)
        query = {name: values[-1] for name, values in parse_qs(url.query).items()}
        if url.path == "/" and method == "GET":
            return 200, {"shard": self.shard}
        try:
            epoch = int(query["epoch"])
        except (KeyError, ValueError):
            raise BadRequest("every statement carries ?epoch=N") from None
        if url.path == "/fence" and method == "POST":
            user = int(query.get("user", "0"))
            with self.pool.lend() as shards:
                # Sent every time: this process outlives the runs, whose databases are made
                # anew (a fence at 1 again), so what a pooled Shards saw raised is stale.
                shards.raised.pop(self.shard, None)
                shards.raise_fence(self.shard, epoch)
            self.served("fence", user, epoch, via)
            return 200, {"shard": self.shard, "min_epoch": epoch}
        found = USER_PATH.match(url.path)
        if not found:
            raise BadRequest(f"no such resource: {method} {url.path}")
        user, what = int(found.group(1)), found.group(2)
        with self.pool.lend() as shards:
            if what == "messages" and method == "GET":
                full = query.get("full") == "1"
                columns = COLUMNS if full else "id, time, body"
                rows = shards.read(self.shard, epoch, f"SELECT {columns} FROM messages WHERE user_id = %s ORDER BY time, id", (user,))
                kind = "move-read" if full else "read"
                if full:
                    messages = [
                        {"id": r[0], "user_id": r[1], "vbucket": r[2], "time": iso(r[3]), "body": r[4], "sender": r[5], "sender_id": r[6]}
                        for r in rows
                    ]
                else:
                    messages = [{"id": r[0], "time": iso(r[1]), "body": r[2]} for r in rows]
                result: dict[str, Any] = {"messages": messages}
            elif what == "messages" and method == "POST":
                if not isinstance(body, dict) or not isinstance(body.get("id"), int) or not isinstance(body.get("body"), str):
                    raise BadRequest('a message is {"id": int, "body": str, "vbucket": int, "sender": str}')
                inserted = shards.write(
                    self.shard, epoch,
                    "INSERT INTO messages (id, user_id, vbucket, time, body, sender) "
                    f"SELECT %s::bigint, %s::bigint, %s::integer, now(), %s::text, %s::text WHERE {FENCE_OK} "
                    "ON CONFLICT (id) DO NOTHING",
                    (body["id"], user, int(body.get("vbucket", 0)), body["body"], str(body.get("sender", "?"))),
                )
                kind, result = "write", {"inserted": inserted}
            elif what == "messages" and method == "DELETE":
                kind, result = "move-delete", {"deleted": shards.write(self.shard, epoch, f"DELETE FROM messages WHERE user_id = %s AND {FENCE_OK}", (user,))}
            elif what == "moved" and method == "GET":
                kind, result = "moved", {"moved": shards.is_moved(self.shard, epoch, user)}
            elif what == "import" and method == "POST":
                if not isinstance(body, dict) or not isinstance(body.get("rows"), list):
                    raise BadRequest('an import is {"rows": [...]}')
                rows = [
                    (r["id"], r["user_id"], r["vbucket"], parse_time(r["time"]), r["body"], r["sender"], r.get("sender_id"))
                    for r in body["rows"]
                ]
                if any(row[1] != user for row in rows):
                    raise BadRequest("an import carries rows of its user only")
                kind, result = "move-write", {"inserted": shards.insert_rows(self.shard, epoch, rows, moved_unit=user)}
            else:
                raise BadRequest(f"no such resource: {method} {url.path}")
        self.served(kind, user, epoch, via)
        return 200 if method != "POST" or what != "messages" else 201, {"shard": self.shard, **result}


def handler_for(service: ShardService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the worker's and the driver's connections are reused
        disable_nagle_algorithm = True

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's names
            self.respond("GET")

        def do_POST(self) -> None:  # noqa: N802
            self.respond("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self.respond("DELETE")

        def respond(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            via = self.headers.get("x-via", "?")
            try:
                status, answer = service.answer(method, self.path, json.loads(raw) if raw else None, via)
            except Fenced as err:
                status, answer = 409, {"error": "fenced", "shard": err.shard, "epoch": err.epoch, "min_epoch": err.min_epoch}
            except (BadRequest, ValueError, KeyError, TypeError) as err:
                status, answer = 400, {"error": "bad_request", "message": str(err)}
            except psycopg.Error as err:
                status, answer = 500, {"error": "database", "message": str(err)}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-shard", service.shard)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="host:port of the PostgreSQL server")
    parser.add_argument("--shard", required=True, help="the database this service serves (shard_N)")
    parser.add_argument("--pool", type=int, default=8, help="connections to it, at most")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (0: any free one)")
    args = parser.parse_args()
    service = ShardService(args.postgres, args.shard, args.pool)
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(service))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"event": "ready", "shard": args.shard, "url": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "log":
            service.set_log(argument)
            print(json.dumps({"event": "logging", "path": argument}), flush=True)
        elif command == "quit":
            break
    server.shutdown()
    service.close()


if __name__ == "__main__":
    main()
