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
- `StoppedOnExit`: a context manager base whose `stop()` runs on leaving the block,
  on a failure while starting, at interpreter exit and on SIGTERM/SIGINT, so a killed
  test run leaves no server behind.
"""

from __future__ import annotations

import atexit
import hashlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any


class JsonLinesChild:
    """A child speaking JSON lines on stdout; stderr passes through to ours (or to the
    file given). Lines that are not JSON are echoed to our stderr with its name."""

    def __init__(self, name: str, command: list[str], *, cwd: str | None = None, stdin: bool = True, stderr: Any = None) -> None:
        self.name = name
        self.command = command
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
            bufsize=1, cwd=cwd, stderr=stderr,
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

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, errors="replace") as log:
                return "".join(log.readlines()[-lines:])
        except OSError:
            return "(no log)"



def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class EtcdServer(ServerProcess):
    """One etcd member (Debian's `etcd-server`, 3.4) on 127.0.0.1, its data in
    `root/<name>`, its JSON gateway at `url`. Alone it is a cluster of one; `EtcdCluster`
    makes members that know each other (`cluster`: `name=peer_url,...`). `restart()`
    starts it again on the same ports and data (after `kill()`, say), as an operator
    restarting a crashed member would."""

    def __init__(self, root: str, name: str = "example", *, ports: tuple[int, int] | None = None,
                 cluster: str | None = None, wait: bool = True, uid: int | None = None) -> None:
        binary = shutil.which("etcd")
        assert binary, "needs etcd (apt-get install -y etcd-server)"
        client, peer = ports or (free_port(), free_port())
        while peer == client:
            peer = free_port()
        self.binary, self.name, self.root = binary, name, root
        self.url = f"http://127.0.0.1:{client}"
        self.peer_url = f"http://127.0.0.1:{peer}"
        self.peer_ports = [peer]
        self.uid = uid
        self.cluster = cluster or f"{name}={self.peer_url}"
        self.log_path = os.path.join(root, f"{name}.log")
        self.restart(wait=wait)

    def restart(self, wait: bool = True) -> None:
        self.own(os.path.join(self.root, self.name))
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.as_user([
                    self.binary, "--name", self.name, "--data-dir", os.path.join(self.root, self.name),
                    "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                    "--listen-peer-urls", self.peer_url, "--initial-advertise-peer-urls", self.peer_url,
                    "--initial-cluster", self.cluster, "--initial-cluster-state", "new",
                    "--log-level", "warn", "--logger", "zap",
                ]),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        if wait:
            self.wait_healthy()

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
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
        with urllib.request.urlopen(request, timeout=2) as answer:
            status: dict[str, Any] = json.loads(answer.read())
            return status


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

    def __init__(self, root: str, size: int = 3, uids: list[int] | None = None) -> None:
        ports: list[tuple[int, int]] = []
        taken: set[int] = set()
        while len(ports) < size:
            pair = (free_port(), free_port())
            if pair[0] != pair[1] and not taken & set(pair):
                taken |= set(pair)
                ports.append(pair)
        cluster = ",".join(f"m{i}=http://127.0.0.1:{peer}" for i, (_, peer) in enumerate(ports))
        self.members: list[EtcdServer] = []
        if uids:
            os.chmod(root, 0o755)  # the members' own users make their data dirs in it
        try:
            for i, pair in enumerate(ports):
                uid = uids[i] if uids else None
                self.members.append(EtcdServer(root, f"m{i}", ports=pair, cluster=cluster, wait=False, uid=uid))
            for member in self.members:
                member.wait_healthy()
        except BaseException:
            self.stop()
            raise
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
        self.port = port or free_port()
        self.hosts = f"127.0.0.1:{self.port}"
        self.uid = uid
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
                raise RuntimeError(f"zookeeper exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"zookeeper did not serve:\n{self.log_tail()}")
            time.sleep(0.1)


class ZooKeeperEnsemble(Members):
    """`size` ZooKeeper members on 127.0.0.1 that form one ensemble, each stopped by PID
    (`stop()`); `hosts` their connection string, `leader()` the member that leads now."""

    def __init__(self, root: str, size: int = 3, uids: list[int] | None = None) -> None:
        ports: list[int] = []
        while len(ports) < 3 * size:
            port = free_port()
            if port not in ports:
                ports.append(port)
        servers = [f"server.{i + 1}=127.0.0.1:{ports[size + i]}:{ports[2 * size + i]}" for i in range(size)]
        self.members: list[ZooKeeperServer] = []
        if uids:
            os.chmod(root, 0o755)  # the members' own users read their configs in it
        try:
            for i in range(size):
                uid = uids[i] if uids else None
                self.members.append(ZooKeeperServer(root, f"zk{i + 1}", port=ports[i], myid=i + 1, servers=servers,
                                                    wait=False, uid=uid))
            for member in self.members:
                member.wait_serving()
        except BaseException:
            self.stop()
            raise
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
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/topology"
        self.changed = threading.Condition()
        self.body = b""
        self.content_type = "application/json"
        self.requests = 0
        self.server: http.server.ThreadingHTTPServer | None = None
        self.start()

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
                    serving = owner.server
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
