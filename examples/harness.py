"""What the live examples' drivers share: child processes spoken to in JSON lines, and
servers stopped by their PID whatever happens.

This is test harness, not what a user copies: the examples' services (`workload.py`,
`service.py`, their Node twins) use shardroute exactly as an application would, and
know nothing of this module. The drivers (`run.py`, `cluster.py`, `servers.py`) use it
to start, steer and stop them.

- `JsonLinesChild`: a child process whose stdout carries one JSON object a line
  (`{"event": "ready"}`, `{"event": "done", ...}`); `expect(event)` waits for the next
  line with that event, `send(line)` writes a command to its stdin.
- `ServerProcess`: a server we started, with its PID, its log and how it stops
  (its signal, then SIGKILL if it lingers).
- `reserve_ports` / `start_on_ports`: ports for servers that cannot bind port 0 and say
  which port they got, reserved outside the ephemeral range, and a start again on fresh
  ones when one was taken (issue 41; see "ports" below).
- `StoppedOnExit`: a context manager base whose `stop()` runs on leaving the block,
  on a failure while starting, at interpreter exit and on SIGTERM/SIGINT, so a killed
  test run leaves no server behind.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import http.server
import importlib
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any, Callable, TypeVar


class JsonLinesChild:
    """A child speaking JSON lines on stdout; stderr passes through to ours (or to the
    file given). Lines that are not JSON are echoed to our stderr with its name."""

    def __init__(self, name: str, command: list[str], *, cwd: str | None = None, stdin: bool = True, stderr: Any = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.command = command
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
            bufsize=1, cwd=cwd, stderr=stderr, env=env,
        )
        self.lines: list[dict[str, Any]] = []  # not yet taken by expect/next_event
        self.events: list[dict[str, Any]] = []  # every line, in order, never consumed
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                print(f"[{self.name}] {line.rstrip()}", file=sys.stderr)
                continue
            with self.arrived:
                self.lines.append(message)
                self.events.append(message)
                self.arrived.notify_all()
        with self.arrived:
            self.arrived.notify_all()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def expect(self, event: str, timeout: float = 600) -> dict[str, Any]:
        """The first waiting line whose `event` is `event` (taken out of the queue);
        an error when the child exits first or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for index, message in enumerate(self.lines):
                    if message.get("event") == event:
                        return self.lines.pop(index)
                if self.process.poll() is not None and not self.reader.is_alive():
                    raise RuntimeError(f"{self.name} exited with {self.process.returncode} before {event!r}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"{self.name}: no {event!r} within {timeout}s")
                # Wake at least once a second: an exit is seen by polling, not notified.
                self.arrived.wait(min(remaining, 1.0))

    def next_event(self) -> dict[str, Any] | None:
        """The next line, in order; None once the process has closed its output."""
        with self.arrived:
            while not self.lines:
                if not self.reader.is_alive():
                    return None
                self.arrived.wait(0.5)
            return self.lines.pop(0)

    def kill(self) -> None:
        """SIGKILL: no last words."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """Ask it to `quit`; kill it if it has not gone within 10 s."""
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()


def stop_process(process: subprocess.Popen[Any], signum: int, timeout: float = 20) -> None:
    """`signum`, then SIGKILL if the process has not gone after `timeout` seconds."""
    if process.poll() is not None:
        return
    try:
        os.kill(process.pid, signum)
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


class ServerProcess:
    """A server process we started: its PID, its log, how it stops. With `uid`, it runs
    under that user id (`setpriv`), so that `PeerCut` can tell its packets from others'."""

    process: subprocess.Popen[Any]
    log_path: str
    stop_signal = signal.SIGTERM
    uid: int | None = None
    peer_ports: list[int]

    def as_user(self, command: list[str]) -> list[str]:
        if self.uid is None:
            return command
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--", *command]

    def own(self, path: str) -> None:
        """Makes `path` (a data dir) the member's, when it runs under a uid of its own."""
        if self.uid is not None:
            os.makedirs(path, exist_ok=True)
            for where, dirs, files in os.walk(path):
                for name in [where, *(os.path.join(where, f) for f in dirs + files)]:
                    os.chown(name, self.uid, self.uid)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        stop_process(self.process, self.stop_signal)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last words."""
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def ports(self) -> list[int]:
        """Every port it binds: its client port (`port`, or `url`'s) and its peer ports."""
        own = getattr(self, "port", None) or int(getattr(self, "url", ":0").rsplit(":", 1)[1])
        return [own, *getattr(self, "peer_ports", [])]

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, errors="replace") as log:
                every = log.readlines()
        except OSError:
            return "(no log)"
        tail = "".join(every[-lines:])
        # A port taken shows, however long the stack trace after it (`start_on_ports` reads it).
        taken = next((line for line in every if ADDRESS_IN_USE.search(line)), None)
        if taken and not ADDRESS_IN_USE.search(tail):
            tail = f"{taken.rstrip()}\n...\n{tail}"
        return tail


# ---------------------------------------------------------------------------- ports
#
# A server gets its port without a race (issue 41): never "bind port 0, read the number,
# close, let the server bind it later" (any outgoing connection may take the number in
# between: port 0 and outgoing connections share the kernel's ephemeral range). A server
# that can bind port 0 itself and say which port it got does so (`shardroute serve
# --listen 127.0.0.1:0`, Deno's "Listening on", workerd's --control-fd: `workerd_ports`). One
# that can only be handed a number (etcd, ZooKeeper, redis-server, postgres; a server
# restarted on its old port) gets one of `reserve_ports()`: a range outside the ephemeral
# one, each port locked for this process by a file in PORT_LOCKS (bindings-node's and
# cli/tests' helpers take the same locks, so parallel runs never share a port), and
# `start_on_ports()` starts it again on fresh ports when it failed because something
# else held one (ADDRESS_IN_USE in its error). The same in JS: bindings-wasm/test/edge/
# ports.mjs; in the CLI's tests: cli/tests/ports/mod.rs. scripts/check-ports.py keeps the
# old pattern out.

PORT_LOCKS = "/tmp/shardroute-ports"
PREFERRED_PORTS = (20_000, 32_000)
# What etcd, ZooKeeper, redis-server, postgres, workerd and Python say when a port is taken.
ADDRESS_IN_USE = re.compile(r"address already in use|could not bind|BindException|EADDRINUSE|errno 98", re.IGNORECASE)
_held_ports: list[int] = []  # locked by this process, unlocked at exit
_port_cursor: list[int] = []  # the next port to try: a random start per process, then counting up


def port_range() -> tuple[int, int]:
    """[low, high): the ports `reserve_ports` hands out, PREFERRED_PORTS less the kernel's
    ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), where port 0 and every
    outgoing connection take theirs."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as proc:
            first, last = (int(part) for part in proc.read().split())
    except (OSError, ValueError):
        first, last = 32_768, 60_999
    low, high = PREFERRED_PORTS
    if last < low or first >= high:
        return low, high
    if first - low >= 1_000:
        return low, first
    if 65_536 - (last + 1) >= 1_000:
        return last + 1, 65_536
    raise RuntimeError(f"no 1000 ports outside the ephemeral range {first}-{last}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_port(port: int) -> bool:
    """Takes PORT_LOCKS/<port> for this process (its PID inside); a lock whose process is
    gone is taken over."""
    path = os.path.join(PORT_LOCKS, str(port))
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                with open(path) as lock:
                    holder = int(lock.read().strip() or 0)
            except (OSError, ValueError):
                holder = 0
            if holder and _alive(holder):
                return False
            try:
                os.unlink(path)  # a dead process's (or a half-written) lock
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "w") as lock:
            lock.write(f"{os.getpid()}\n")
        return True
    return False


def _bindable(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:`port` now (a filter only: the server's own
    bind decides, and `start_on_ports` retries when it fails)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def held_elsewhere(ports: list[int]) -> str:
    """For a server of ours that exited: "Address already in use" naming each of its
    `ports` that something else holds now, else "". (Debian's ZooKeeper logs nothing: its
    exit alone does not say why.)"""
    held = [port for port in ports if not _bindable(port)]
    return "".join(f"127.0.0.1:{port}: Address already in use (held by another process)\n" for port in held)


def release_ports(ports: list[int] | None = None) -> None:
    """Unlocks `ports` (all this process holds by default); at exit, all."""
    for port in list(_held_ports if ports is None else ports):
        if port in _held_ports:
            _held_ports.remove(port)
            path = os.path.join(PORT_LOCKS, str(port))
            try:
                with open(path) as lock:
                    mine = lock.read().strip() == str(os.getpid())
                if mine:
                    os.unlink(path)
            except OSError:
                pass


atexit.register(release_ports)


def hand_over_ports(ports: list[int], pid: int) -> None:
    """Makes process `pid` (a server we started that outlives us, such as
    scripts/etcd_secure.py's etcd) the holder of `ports`' locks: they stay held while it
    runs, after this process exits, and are free again once it is gone."""
    for port in ports:
        if port in _held_ports:
            with open(os.path.join(PORT_LOCKS, str(port)), "w") as lock:
                lock.write(f"{pid}\n")
            _held_ports.remove(port)


def reserve_ports(count: int = 1) -> list[int]:
    """`count` distinct ports of `port_range()`, locked for this process until it exits
    (or `release_ports`): no other run of ours is handed them and no outgoing connection
    takes them, so a server may bind one later, and again after a restart. Nothing
    listens on one until a server is started on it: a port for "nobody answers" too."""
    low, high = port_range()
    os.makedirs(PORT_LOCKS, exist_ok=True)
    try:
        os.chmod(PORT_LOCKS, 0o1777)  # any user's run shares the locks
    except OSError:
        pass
    if not _port_cursor:
        _port_cursor.append(random.SystemRandom().randrange(low, high))
    ports: list[int] = []
    for _ in range(high - low):
        if len(ports) == count:
            return ports
        port = low + (_port_cursor[0] - low) % (high - low)
        _port_cursor[0] = port + 1
        if port in _held_ports or not _lock_port(port):
            continue
        _held_ports.append(port)
        if _bindable(port):
            ports.append(port)
        # else: something outside our runs listens there; it stays locked (skipped) till exit
    if len(ports) == count:
        return ports
    raise RuntimeError(f"no {count} free ports left in {low}-{high - 1} (locks in {PORT_LOCKS})")


def workerd_ports(control: int, process: subprocess.Popen[Any], sockets: int = 1, timeout: float = 60) -> list[int]:
    """The ports a `workerd serve --control-fd N` bound for its sockets s0, s1, ... (its
    config says `127.0.0.1:0`): read from `control`, the read end of the pipe whose write
    end is its N (`{"event":"listen","socket":"s0","port":...}` a line). Keep `control`
    open while it runs: it may write there again."""
    deadline = time.monotonic() + timeout
    ports: dict[str, int] = {}
    pending = b""
    while len(ports) < sockets:
        if process.poll() is not None:
            raise RuntimeError(f"workerd exited with {process.returncode} before it listened")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"workerd did not listen within {timeout}s")
        readable, _, _ = select.select([control], [], [], min(remaining, 1.0))
        if not readable:
            continue
        chunk = os.read(control, 4096)
        if not chunk:
            raise RuntimeError("workerd closed its control descriptor before it listened")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if message.get("event") == "listen":
                ports[str(message["socket"])] = int(message["port"])
    return [ports[f"s{i}"] for i in range(sockets)]


T = TypeVar("T")


def start_on_ports(count: int, start: Callable[[list[int]], T], tries: int = 6) -> T:
    """`start(ports)` with `count` ports of `reserve_ports`; when it raises an error that
    says a port was taken (ADDRESS_IN_USE: the server's log tail is in the error), again
    with fresh ports, up to `tries` times. `start` cleans up after itself when it fails
    (stops what it started; on a retry, data made for the old ports must go too)."""
    for attempt in range(tries):
        ports = reserve_ports(count)
        try:
            return start(ports)
        except Exception as error:  # noqa: BLE001 - re-raised unless a port was taken
            if attempt + 1 == tries or not ADDRESS_IN_USE.search(f"{error!r} {error}"):
                raise
    raise AssertionError("unreachable")


class EtcdServer(ServerProcess):
    """One etcd member (Debian's `etcd-server`, 3.4) on 127.0.0.1, its data in
    `root/<name>`, its JSON gateway at `url`. Alone it is a cluster of one; `EtcdCluster`
    makes members that know each other (`cluster`: `name=peer_url,...`). `restart()`
    starts it again on the same ports and data (after `kill()`, say), as an operator
    restarting a crashed member would. Without `ports`, it takes two of `reserve_ports()`
    (fresh ones while one is taken) and waits until it answers."""

    def __init__(self, root: str, name: str = "example", *, ports: tuple[int, int] | None = None,
                 cluster: str | None = None, wait: bool = True, uid: int | None = None,
                 tls: EtcdTls | None = None) -> None:
        binary = shutil.which("etcd")
        assert binary, "needs etcd (apt-get install -y etcd-server)"
        self.binary, self.name, self.root = binary, name, root
        self.uid = uid
        self.tls = tls  # with it: https:// with client certificates (`EtcdTls`)
        self.log_path = os.path.join(root, f"{name}.log")
        if ports:  # a cluster's member: `EtcdCluster` retries the whole cluster
            self._on(ports, cluster)
            self.restart(wait=wait)
            return
        attempts = 0

        def start(pair: list[int]) -> None:
            nonlocal attempts
            attempts += 1
            if attempts > 1:  # the last try's member never served: its data and log go
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
                open(self.log_path, "wb").close()
            self._on((pair[0], pair[1]), cluster)
            try:
                self.restart(wait=True)
            except BaseException:
                self.stop()  # it did not serve: none lingers
                raise

        start_on_ports(2, start)

    def _on(self, ports: tuple[int, int], cluster: str | None) -> None:
        client, peer = ports
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{client}"
        self.peer_url = f"http://127.0.0.1:{peer}"
        self.peer_ports = [peer]
        self.cluster = cluster or f"{self.name}={self.peer_url}"

    def restart(self, wait: bool = True) -> None:
        self.own(os.path.join(self.root, self.name))
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.as_user([
                    self.binary, "--name", self.name, "--data-dir", os.path.join(self.root, self.name),
                    "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                    "--listen-peer-urls", self.peer_url, "--initial-advertise-peer-urls", self.peer_url,
                    "--initial-cluster", self.cluster, "--initial-cluster-state", "new",
                    "--log-level", "warn", "--logger", "zap", *(self.tls.server_flags() if self.tls else []),
                ]),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        if wait:
            self.wait_healthy()

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=2, context=self._context()) as answer:
                return b"true" in answer.read()
        except OSError:
            return False

    def wait_healthy(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd did not answer:\n{self.log_tail()}")
            time.sleep(0.1)

    def status(self) -> dict[str, Any]:
        """`/v3/maintenance/status`: this member's id (`header.member_id`) and the leader's."""
        request = urllib.request.Request(self.url + "/v3/maintenance/status", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=2, context=self._context()) as answer:
            status: dict[str, Any] = json.loads(answer.read())
            return status

    def _context(self) -> ssl.SSLContext | None:
        return self.tls.client_context() if self.tls else None


def wait_all(members: list[Any], ready: Callable[[Any], bool], what: str, timeout: float = 60) -> None:
    """Until `ready(member)` for each of `members` started together; an error with the
    log of the first that exits (one that could not bind its port, say) or after `timeout`."""
    deadline = time.monotonic() + timeout
    waiting = list(members)
    while waiting:
        for member in members:
            if not member.alive():
                raise RuntimeError(f"{what} {member.name} exited:\n{held_elsewhere(member.ports())}{member.log_tail()}")
        waiting = [member for member in waiting if not ready(member)]
        if waiting and time.monotonic() > deadline:
            raise RuntimeError(f"{what} {waiting[0].name} did not serve:\n{waiting[0].log_tail()}")
        if waiting:
            time.sleep(0.1)


class Members:
    """Servers that form one cluster: `stop()` stops each by PID (SIGCONT first, should a
    test have paused it)."""

    members: list[Any]

    def stop(self) -> None:
        for member in self.members:
            if member.alive():
                try:
                    os.kill(member.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            member.stop()


class EtcdCluster(Members):
    """`size` etcd members on 127.0.0.1 that form one cluster, each stopped by PID
    (`stop()`); `urls` their client URLs, `leader()` the member that leads now. With
    `uids`, each runs under a user id of its own (see `PeerCut`)."""

    def __init__(self, root: str, size: int = 3, uids: list[int] | None = None, tls: EtcdTls | None = None) -> None:
        self.members: list[EtcdServer] = []
        if uids:
            os.chmod(root, 0o755)  # the members' own users make their data dirs in it

        def start(ports: list[int]) -> None:
            # Each member's (client, peer) ports; all known before any starts. When one
            # member cannot bind its port, the whole cluster starts again on fresh ports.
            pairs = [(ports[2 * i], ports[2 * i + 1]) for i in range(size)]
            cluster = ",".join(f"m{i}=http://127.0.0.1:{peer}" for i, (_, peer) in enumerate(pairs))
            self.members = []
            for i in range(size):
                shutil.rmtree(os.path.join(root, f"m{i}"), ignore_errors=True)
                open(os.path.join(root, f"m{i}.log"), "wb").close()
            try:
                for i, pair in enumerate(pairs):
                    uid = uids[i] if uids else None
                    self.members.append(EtcdServer(root, f"m{i}", ports=pair, cluster=cluster, wait=False, uid=uid, tls=tls))
                wait_all(self.members, EtcdServer.healthy, "etcd")
            except BaseException:
                self.stop()
                raise

        start_on_ports(2 * size, start)
        self.urls = [member.url for member in self.members]

    def leader(self, timeout: float = 30) -> EtcdServer:
        """The member that leads, as a live member reports it (waits for an election)."""
        deadline = time.monotonic() + timeout
        while True:
            for member in self.members:
                if not member.alive():
                    continue
                try:
                    status = member.status()
                except OSError:
                    continue
                leader = status.get("leader")
                found = [m for m in self.members if m.alive() and m.status().get("header", {}).get("member_id") == leader]
                if found:
                    return found[0]
            if time.monotonic() > deadline:
                raise RuntimeError("no etcd leader")
            time.sleep(0.05)



class EtcdTls:
    """What a secure etcd needs, made in `root/tls` by scripts/etcd_secure.py's
    `make_certificates` (the recipe every language's tests use: a throwaway CA, valid two
    days): the CA (`ca`), the members' certificate (`server_cert`, `server_key`: for
    127.0.0.1 and localhost, usable as a client too, for the gateway's own connection) and
    a client certificate (`client_cert`, `client_key`) without a common name (etcd 3.4's
    gateway refuses one that has one once authentication is on)."""

    def __init__(self, root: str) -> None:
        scripts = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
        if scripts not in sys.path:
            sys.path.insert(0, scripts)
        etcd_secure = importlib.import_module("etcd_secure")  # it imports this module: not at the top

        self.dir = os.path.join(root, "tls")
        os.makedirs(self.dir, exist_ok=True)
        files = etcd_secure.make_certificates(self.dir)
        self.ca, self.client_cert, self.client_key = files["ca_file"], files["cert_file"], files["key_file"]
        self.server_cert, self.server_key = os.path.join(self.dir, "server.crt"), os.path.join(self.dir, "server.key")
        os.chmod(self.dir, 0o755)  # members running under their own uids read it
        for name in os.listdir(self.dir):
            os.chmod(os.path.join(self.dir, name), 0o644)  # throwaway keys: the members' uids read them

    def server_flags(self) -> list[str]:
        """etcd's flags: https with these files, client certificates required."""
        return ["--cert-file", self.server_cert, "--key-file", self.server_key, "--trusted-ca-file", self.ca,
                "--client-cert-auth"]

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca)
        context.load_cert_chain(self.client_cert, self.client_key)
        return context


def etcd_gateway(url: str, path: str, body: dict[str, Any], tls: EtcdTls | None = None,
                 token: str | None = None) -> dict[str, Any]:
    """One POST to an etcd member's JSON gateway (the harness's own, not shardroute's)."""
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **({"Authorization": token} if token else {})})
    with urllib.request.urlopen(request, timeout=10, context=tls.client_context() if tls else None) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


def enable_etcd_auth(url: str, user: str, password: str, prefix: str, tls: EtcdTls | None = None) -> None:
    """Turns etcd's authentication on (through member `url`): a `root` user (a random
    password, not kept: nothing here needs it again) with the root role, and `user` with
    `password` and a role that may read and write the keys under `prefix`, and nothing else."""
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    role = f"{user}-role"
    for path, body in (
        ("/v3/auth/user/add", {"name": "root", "password": base64.b64encode(os.urandom(18)).decode()}),
        ("/v3/auth/role/add", {"name": "root"}),
        ("/v3/auth/user/grant", {"user": "root", "role": "root"}),
        ("/v3/auth/user/add", {"name": user, "password": password}),
        ("/v3/auth/role/add", {"name": role}),
        ("/v3/auth/role/grant", {"name": role, "perm": {"permType": "READWRITE", "key": b64(prefix),
                                                          "range_end": b64(end)}}),
        ("/v3/auth/user/grant", {"user": user, "role": role}),
        ("/v3/auth/enable", {}),
    ):
        etcd_gateway(url, path, body, tls)


class UnavailableMember:
    """A member that is going away, as etcd's JSON gateway answers while one shuts down or
    restarts: HTTP 503 with gRPC code 14 (UNAVAILABLE) in the body, to every request. It
    binds 127.0.0.1 port 0 itself and reads the port back (`url`); with `tls`, it speaks
    https with the members' certificate and asks for a client certificate, as they do.
    `requests` counts what it was asked (one server per client tells whose)."""

    BODY = json.dumps({"error": "etcdserver: server stopped", "code": 14, "message": "etcdserver: server stopped"}).encode()

    def __init__(self, tls: EtcdTls | None = None) -> None:
        self.requests = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    owner.requests += 1
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(owner.BODY)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(owner.BODY)
                self.close_connection = True

            do_GET = do_POST = answer  # noqa: N815 - the stdlib's names

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=tls.ca)
            context.load_cert_chain(tls.server_cert, tls.server_key)
            context.verify_mode = ssl.CERT_REQUIRED
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        port = self.server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


ZOOKEEPER_JARS = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"  # Debian's `zookeeper`


def four_letter_word(port: int, word: str, timeout: float = 2) -> str:
    """ZooKeeper's admin command `word` (`ruok`, `srvr`) on a client port: its answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(word.encode())
        chunks = []
        while chunk := conn.recv(4096):
            chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")


class ZooKeeperServer(ServerProcess):
    """One ZooKeeper member (Debian's `zookeeper`, 3.8) on 127.0.0.1, its data in
    `root/<name>`, its client port `port`. Alone it is standalone; `ZooKeeperEnsemble`
    makes members that know each other (`servers`: the `server.N=...` lines, `myid` N).
    A tick of 200 ms (sessions of 0.4–4 s) so that faults play out in seconds. `restart()`
    starts it again on the same ports and data."""

    stop_signal = signal.SIGTERM

    def __init__(self, root: str, name: str = "zk", *, port: int | None = None, myid: int = 1,
                 servers: list[str] | None = None, wait: bool = True, uid: int | None = None) -> None:
        java = shutil.which("java")
        assert java, "needs java (apt-get install -y zookeeper, which brings a JRE)"
        self.java, self.name, self.root = java, name, root
        self.uid = uid
        if port is None:  # standalone: a fresh port (and data) while the last was taken
            attempts = 0

            def start(ports: list[int]) -> None:
                nonlocal attempts
                attempts += 1
                if attempts > 1:
                    shutil.rmtree(os.path.join(root, name), ignore_errors=True)
                    open(os.path.join(root, f"{name}.log"), "wb").close()
                try:
                    self._configure(ports[0], myid, servers, wait=True)
                except BaseException:
                    if hasattr(self, "process"):
                        self.stop()  # it did not serve: none lingers
                    raise

            start_on_ports(1, start)
        else:  # a member of `ZooKeeperEnsemble`, which retries the ensemble
            self._configure(port, myid, servers, wait=wait)

    def _configure(self, port: int, myid: int, servers: list[str] | None, wait: bool) -> None:
        root, name = self.root, self.name
        self.port = port
        self.hosts = f"127.0.0.1:{self.port}"
        # Its own `server.N=host:quorum:election` line: the ports its peers reach it on.
        mine = next((line for line in servers or [] if line.startswith(f"server.{myid}=")), None)
        self.peer_ports = [int(port) for port in mine.split(":")[1:3]] if mine else []
        data = os.path.join(root, name)
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "myid"), "w") as out:
            out.write(f"{myid}\n")
        self.config_path = os.path.join(root, f"{name}.cfg")
        with open(self.config_path, "w") as out:
            out.write("\n".join([
                "tickTime=200", "initLimit=50", "syncLimit=10", f"dataDir={data}",
                f"clientPort={self.port}", "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                "4lw.commands.whitelist=ruok,srvr", "maxSessionTimeout=20000", *(servers or []), "",
            ]))
        self.log_path = os.path.join(root, f"{name}.log")
        self.data = data
        self.restart(wait=wait)

    def restart(self, wait: bool = True) -> None:
        self.own(self.data)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.as_user([
                    # jute.maxbuffer: values up to 8 MiB (the default, 1 MiB, is less than
                    # the largest document the live run writes: 65,537 nodes).
                    self.java, "-Xmx128m", "-XX:+UseSerialGC", "-Djute.maxbuffer=8388608", "-cp", ZOOKEEPER_JARS,
                    f"-Dzookeeper.log.dir={self.root}", "-Dzookeeper.root.logger=WARN,CONSOLE",
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain", self.config_path,
                ]),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        if wait:
            self.wait_serving()

    def mode(self) -> str | None:
        """`leader`, `follower` or `standalone`; None when it does not serve (no quorum)."""
        try:
            answer = four_letter_word(self.port, "srvr")
        except OSError:
            return None
        for line in answer.splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return None

    def wait_serving(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.mode() is None:
            if self.process.poll() is not None:
                raise RuntimeError(f"zookeeper exited:\n{held_elsewhere(self.ports())}{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"zookeeper did not serve:\n{self.log_tail()}")
            time.sleep(0.1)


class ZooKeeperEnsemble(Members):
    """`size` ZooKeeper members on 127.0.0.1 that form one ensemble, each stopped by PID
    (`stop()`); `hosts` their connection string, `leader()` the member that leads now."""

    def __init__(self, root: str, size: int = 3, uids: list[int] | None = None) -> None:
        self.members: list[ZooKeeperServer] = []
        if uids:
            os.chmod(root, 0o755)  # the members' own users read their configs in it

        def start(ports: list[int]) -> None:
            # Client, quorum and election ports of every member, all known before any
            # starts; when one member cannot bind one, the ensemble starts again on fresh ports.
            servers = [f"server.{i + 1}=127.0.0.1:{ports[size + i]}:{ports[2 * size + i]}" for i in range(size)]
            self.members = []
            for i in range(size):
                shutil.rmtree(os.path.join(root, f"zk{i + 1}"), ignore_errors=True)
                open(os.path.join(root, f"zk{i + 1}.log"), "wb").close()
            try:
                for i in range(size):
                    uid = uids[i] if uids else None
                    self.members.append(ZooKeeperServer(root, f"zk{i + 1}", port=ports[i], myid=i + 1,
                                                        servers=servers, wait=False, uid=uid))
                wait_all(self.members, lambda member: member.mode() is not None, "zookeeper")
            except BaseException:
                self.stop()
                raise

        start_on_ports(3 * size, start)
        self.hosts = ",".join(member.hosts for member in self.members)

    def leader(self, timeout: float = 30) -> ZooKeeperServer:
        """The member that leads, as it reports itself (waits for an election)."""
        deadline = time.monotonic() + timeout
        while True:
            for member in self.members:
                if member.alive() and member.mode() == "leader":
                    return member
            if time.monotonic() > deadline:
                raise RuntimeError("no zookeeper leader")
            time.sleep(0.05)



MEMBER_UIDS = [64101, 64102, 64103]  # user ids the members of a cut-able cluster run under


def can_cut() -> str | None:
    """None when `PeerCut` can work here, else why not: it needs root (to run members
    under other uids and to load nftables rules), `setpriv` and `nft`."""
    if os.geteuid() != 0:
        return "cutting a member off needs root"
    for tool in ("setpriv", "nft"):
        if shutil.which(tool) is None:
            return f"cutting a member off needs {tool}"
    return None


class PeerCut:
    """Cuts one member of a cluster off from the others, on 127.0.0.1, where an address
    cannot tell the members apart (etcd and ZooKeeper open their peer connections from
    127.0.0.1 whatever they bind): each member runs under a user id of its own
    (`MEMBER_UIDS`), and an nftables table of ours drops the cut member's packets to the
    others' peer ports and theirs to its peer ports (`meta skuid`). Clients (this
    process's uid) still reach every member. `heal()` deletes the table; so does exit."""

    def __init__(self, members: list[Any], cut: Any) -> None:
        assert cut.uid is not None and all(m.uid is not None for m in members), "members need uids of their own"
        self.table = f"shardroute_cut_{os.getpid()}"
        others = [m for m in members if m is not cut]
        their_ports = ", ".join(str(port) for m in others for port in m.peer_ports)
        its_ports = ", ".join(str(port) for port in cut.peer_ports)
        their_uids = ", ".join(str(m.uid) for m in others)
        rules = "\n".join([
            f"table inet {self.table} {{",
            "  chain out {",
            "    type filter hook output priority 0; policy accept;",
            # Whatever the cut member sends a peer: on connections it dialed, and on
            # those dialed to its peer ports.
            f"    meta skuid {cut.uid} tcp dport {{ {their_ports} }} drop",
            f"    meta skuid {cut.uid} tcp sport {{ {its_ports} }} drop",
            # Whatever a peer sends to its peer ports.
            f"    meta skuid {{ {their_uids} }} tcp dport {{ {its_ports} }} drop",
            "  }",
            "}",
        ])
        subprocess.run(["nft", "-f", "-"], input=rules, text=True, check=True)
        atexit.register(self.heal)
        # A peer's data on a connection the cut member dialed would still reach it (the
        # rules cannot tell that peer's packets to it from its packets to the third):
        # such connections are closed (`ss -K`), and dialing them again is dropped.
        for port in cut.peer_ports + [port for m in others for port in m.peer_ports]:
            subprocess.run(["ss", "-K", "-t", f"( sport = :{port} or dport = :{port} )"], capture_output=True)

    def heal(self) -> None:
        subprocess.run(["nft", "delete", "table", "inet", self.table], capture_output=True)


class TopologyHttpServer:
    """A document served over HTTP on 127.0.0.1 as a CDN or object store would serve a
    file: ``GET`` answers the body with a strong ``ETag`` (a hash of it) and
    ``Content-Type``; ``If-None-Match`` with the current tag answers ``304``. With
    ``long_poll`` it honours ``Prefer: wait=N`` (RFC 7240): a request whose tag is current
    is held until the body changes or N seconds pass. ``set(body)`` changes the body;
    ``stop()``/``start()`` take the server away and bring it back on the same port."""

    def __init__(self, long_poll: bool = True) -> None:
        self.long_poll = long_poll
        self.changed = threading.Condition()
        self.body = b""
        self.content_type = "application/json"
        self.requests = 0
        self.server: http.server.ThreadingHTTPServer | None = None

        # A reserved port, not port 0: `start()` after `stop()` binds the same one again.
        def start(ports: list[int]) -> None:
            self.port = ports[0]
            self.url = f"http://127.0.0.1:{self.port}/topology"
            self.start()

        start_on_ports(1, start)

    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'

    def set(self, body: bytes | str, content_type: str = "application/json") -> None:
        with self.changed:
            self.body = body.encode() if isinstance(body, str) else body
            self.content_type = content_type
            self.changed.notify_all()

    def start(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                with owner.changed:
                    owner.requests += 1
                    # The server this handler belongs to, not the one running now: a
                    # request accepted just before stop() is read by a handler that may
                    # run after it, and must then close unanswered, not answer for the
                    # next server (a follower would see no disconnect across the stop).
                    serving = self.server
                    held = self.headers.get("If-None-Match")
                    wait = self.headers.get("Prefer", "").partition("wait=")[2]
                    if held == owner.etag() and owner.long_poll and wait.isdigit():
                        owner.changed.wait_for(
                            lambda: held != owner.etag() or owner.server is not serving, timeout=int(wait)
                        )
                    if owner.server is not serving:
                        return  # stopped while the poll was held: the connection closes unanswered, as a dead server's would
                    tag, body, kind = owner.etag(), owner.body, owner.content_type
                if held == tag:
                    self.send_response(304)
                    self.send_header("ETag", tag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("ETag", tag)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 - answered as a GET: a server that is not what it was taken for
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

            def log_message(self, *args: Any) -> None:
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
            with self.changed:
                self.changed.notify_all()

class StoppedOnExit:
    """`with Subclass() as running:` calls `start()`, and `stop()` on every way out:
    the end of the block, a failure inside `start()`, interpreter exit, SIGTERM or
    SIGINT (after which the previous handler runs and the script exits 128 + signal).
    `stop()` must be safe to call twice."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        atexit.register(self.stop)
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(signum)

            def handler(number: int, frame: object, previous: object = previous) -> None:
                self.stop()
                if callable(previous):
                    previous(number, frame)
                raise SystemExit(128 + number)

            signal.signal(signum, handler)
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
