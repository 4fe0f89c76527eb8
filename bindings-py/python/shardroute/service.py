"""shardroute.service: the routing service (``GET /route?key=...``, ``POST /route``)
as a handler a Python server mounts, answering what ``shardroute serve`` answers.

A client in any language asks "which shard, which node?" over HTTP; this module moves
the bytes and the core (``shardroute::service``, docs/routing-service.md) decides every
answer: the query, the batch, the keys and their forms, the limits, the status codes,
the JSON, the ETag. ``RouteService(router)`` takes a ``Router``, or a function that
returns the current one (a follower's ``router``, ``None`` before the first document:
then ``503``)::

    from http.server import ThreadingHTTPServer
    from shardroute.service import handler

    server = ThreadingHTTPServer(("127.0.0.1", 8080), handler(lambda: follower.router))
    server.serve_forever()

or, in a handler of one's own, ``RouteService(...).handle(self)`` answers a request for
``/route`` and returns False for any other path, writing nothing. A ``POST`` body is
read only when its ``Content-Length`` is within ``MAX_SERVICE_BODY_BYTES`` (1 MiB; past
it: ``413``, unread, the connection closed), within ``BODY_TIMEOUT_MS`` of the head (one
deadline for the whole body, not per read: a client dripping it is closed, unanswered).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, NamedTuple, Optional, Union

import shardroute

# The native half: a private submodule of the compiled module, outside its `__all__` and
# its stubs (bindings-py/src/service.rs).
_core: Any = getattr(importlib.import_module("shardroute._native"), "_service")

__all__ = [
    "BODY_TIMEOUT_MS",
    "MAX_SERVICE_BODY_BYTES",
    "MAX_SERVICE_KEYS",
    "PATH",
    "Answer",
    "RouteService",
    "handler",
]

#: Most bytes of a ``POST /route`` body (``limits::MAX_SERVICE_BODY_BYTES``).
MAX_SERVICE_BODY_BYTES: int = _core.MAX_SERVICE_BODY_BYTES
#: Most keys of one batch (``limits::MAX_SERVICE_KEYS``).
MAX_SERVICE_KEYS: int = _core.MAX_SERVICE_KEYS
#: How long a body may take to arrive after the head, in ms (``service::BODY_TIMEOUT_MS``).
BODY_TIMEOUT_MS: int = _core.BODY_TIMEOUT_MS
#: The path the service answers (``/route``).
PATH: str = _core.PATH

#: A router, or a function giving the current one (None: no document yet).
Routers = Union["shardroute.Router", Callable[[], Optional["shardroute.Router"]]]


class Answer(NamedTuple):
    """One answer: the status, the headers (lower-case names) and the body (JSON, or
    empty for 304). Content-Length is the writer's to add."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


class RouteService:
    """The routing service over ``router`` (a Router, or a function returning the
    current one). The core's service is made once per router object."""

    def __init__(self, router: Routers) -> None:
        self._router = router
        self._made: tuple[Any, Any] = (None, None)

    def _service(self) -> Any:
        router = self._router() if callable(self._router) else self._router
        if router is None:
            return None
        held, service = self._made
        if held is not router:
            service = _core.RoutingService(router)
            self._made = (router, service)
        return service

    @staticmethod
    def handles(target: str) -> bool:
        """Whether the path of ``target`` (path and query) is the service's."""
        return bool(_core.handles(target))

    def answer(self, method: str, target: str, if_none_match: Optional[str] = None, body: bytes = b"") -> Answer:
        """The answer to one request, its body already read (and bounded: past
        ``MAX_SERVICE_BODY_BYTES`` it is refused whole, 413)."""
        service = self._service()
        if service is None:
            return Answer(*_core.unavailable())
        return Answer(*service.answer(method, target, if_none_match, bytes(body)))

    def handle(self, request: BaseHTTPRequestHandler) -> bool:
        """Answers ``request`` (an http.server handler whose head is read) when its path
        is the service's, reading its body within the limits; False for another path,
        with nothing read or written. Raises TimeoutError (a body not in by
        ``BODY_TIMEOUT_MS``) or ConnectionError (a client gone), with nothing written:
        close the connection (``handler``'s class does)."""
        if not self.handles(request.path):
            return False
        held = request.headers.get_all("If-None-Match") or []
        if_none_match = ", ".join(held) if held else None
        body = b""
        answer: Optional[Answer] = None
        if request.command == "POST":
            body, answer = _read_body(request)
        if answer is None:
            answer = self.answer(request.command, request.path, if_none_match, body)
        _write(request, answer)
        return True


def _read_body(request: BaseHTTPRequestHandler) -> tuple[bytes, Optional[Answer]]:
    """The body of ``request``, or the answer that refuses it unread (413)."""
    length_text = request.headers.get("Content-Length")
    try:
        length = int(length_text) if length_text is not None else 0
    except ValueError:
        length = -1
    if length < 0 or (length_text is None and request.headers.get("Transfer-Encoding")):
        # Not a length (or a chunked body, which http.server does not decode): nothing is
        # read, the core refuses the empty body as not JSON, the connection is closed.
        request.close_connection = True
        return b"", None
    if length > MAX_SERVICE_BODY_BYTES:
        request.close_connection = True
        return b"", Answer(*_core.body_too_large(length))
    deadline = time.monotonic() + BODY_TIMEOUT_MS / 1000
    chunks: list[bytes] = []
    left = length
    while left > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request body did not arrive in time")
        request.connection.settimeout(remaining)
        chunk = request.rfile.read1(min(left, 1 << 16))
        if not chunk:
            raise ConnectionError("the client closed before sending its body")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks), None


def _write(request: BaseHTTPRequestHandler, answer: Answer) -> None:
    request.send_response(answer.status)
    for name, value in answer.headers:
        request.send_header(name, value)
    request.send_header("Content-Length", str(len(answer.body)))
    if request.close_connection:
        request.send_header("Connection", "close")
    request.end_headers()
    request.wfile.write(answer.body)


class _RouteHandler(BaseHTTPRequestHandler):
    """http.server's handler over ``service`` (set by ``handler``)."""

    service: RouteService

    def _any(self) -> None:
        try:
            if not self.service.handle(self):
                _write(self, self.service.answer(self.command, self.path))
        except (TimeoutError, ConnectionError, OSError):
            # A body that never came, a client gone: closed with no answer.
            self.close_connection = True

    # HEAD is left to http.server (501): an answer to it has no body to carry.
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass


def handler(router: Routers) -> type[BaseHTTPRequestHandler]:
    """An http.server request handler class answering the routing service at every
    path (``/route``; any other path is the core's 404), for
    ``ThreadingHTTPServer(address, handler(router))``."""
    return type("RouteHandler", (_RouteHandler,), {"service": RouteService(router)})
