#!/usr/bin/env python3
"""A real etcd with TLS and authentication, for the tests of every language (issue 35).

One etcd member (Debian's `etcd-server`, 3.4) on 127.0.0.1 serving its JSON gateway over
https only, client certificates required (`--client-cert-auth`), and etcd's
authentication enabled: users `root` and `shardroute` (the application's, read-write on
every key) with random passwords. A throwaway CA, a server certificate (SAN 127.0.0.1,
localhost) and a client certificate are made with /usr/bin/openssl in a fresh temp dir,
which also holds the member's data and log. Ports come from examples/harness.py's
`start_on_ports` (issue 41: reserved, never "bind 0 and reuse"); the port locks are
handed to the etcd process, so they stay held after `start` exits and free once it is
gone.

From a shell (Node's and the CLI's tests run it this way):

    python3 scripts/etcd_secure.py start --json [--auth-token-ttl SECONDS]
        prints one JSON object and exits, etcd left running:
        {"url": "https://127.0.0.1:PORT", "ca_file", "cert_file", "key_file",
         "user": "shardroute", "password", "root_user": "root", "root_password",
         "pid", "data_dir", "log_file"}
    python3 scripts/etcd_secure.py stop PID
        stops that etcd (SIGTERM, then SIGKILL) and removes its temp dir; refuses a PID
        that is not an etcd this script started (its --data-dir is not one of ours)
    python3 scripts/etcd_secure.py admin INFO_JSON_FILE PATH BODY_JSON
        (rarely needed) posts BODY to the gateway's PATH as root, prints the answer

From Python (the Python tests):

    sys.path.insert(0, "<repo>/scripts"); import etcd_secure
    with etcd_secure.SecureEtcd() as etcd:      # or SecureEtcd(auth_token_ttl=2)
        etcd.info  # the dict above
        etcd.admin("/v3/auth/user/delete", {"name": "shardroute"})  # as root
        etcd.add_user()                        # the application user again, same password

A start that fails stops what it started (by PID) and removes the temp dir. Only the
Python standard library, /usr/bin/openssl and etcd are needed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
from harness import ADDRESS_IN_USE, PORT_LOCKS, hand_over_ports, start_on_ports  # noqa: E402

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PREFIX = "shardroute-etcd-secure-"
APP_USER = "shardroute"
ROOT_USER = "root"
#: How long etcd may take to serve after it starts (a slow, shared machine).
START_TIMEOUT_S = 30.0


def _openssl(directory: str, *args: str) -> None:
    done = subprocess.run([OPENSSL, *args], cwd=directory, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"openssl {' '.join(args)}: {done.stderr.strip()}")


def make_certificates(directory: str) -> dict[str, str]:
    """A CA, a server certificate for 127.0.0.1 (usable as a client certificate too: etcd's
    gateway presents it to etcd's own gRPC listener) and a client certificate without a
    Common Name (P-256 keys), valid 2 days, in `directory`; returns their paths."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(directory, "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=shardroute test CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-addext", "subjectKeyIdentifier=hash")
    for name, common, usage, san in (
        ("server", "127.0.0.1", "serverAuth,clientAuth", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"),
        # No Common Name: with auth on, etcd's gateway refuses (HTTP 400) a client
        # certificate that has one, as it could not map it to a user.
        ("client", "", "clientAuth", ""),
    ):
        with open(os.path.join(directory, f"{name}.ext"), "w") as ext:
            ext.write(f"basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                      f"extendedKeyUsage={usage}\nsubjectKeyIdentifier=hash\n"
                      f"authorityKeyIdentifier=keyid,issuer\n{san}")
        _openssl(directory, "req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={common}" if common else "/O=shardroute test client")
        _openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext")
    return {f: os.path.join(directory, n) for f, n in
            (("ca_file", "ca.crt"), ("cert_file", "client.crt"), ("key_file", "client.key"))}


def client_context(info: dict[str, Any]) -> ssl.SSLContext:
    """An SSL context trusting the test CA and presenting the client certificate."""
    context = ssl.create_default_context(cafile=info["ca_file"])
    context.load_cert_chain(info["cert_file"], info["key_file"])
    return context


def post(info: dict[str, Any], path: str, body: dict[str, Any], token: str | None = None,
         timeout: float = 5) -> dict[str, Any]:
    """POSTs `body` to the gateway's `path` (with `token` as `authorization`); the JSON
    answer, or RuntimeError with etcd's error."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = token
    request = urllib.request.Request(info["url"] + path, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=client_context(info)) as answer:
            result: dict[str, Any] = json.loads(answer.read() or b"{}")
            return result
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"etcd {path}: HTTP {error.code} {error.read()[:500]!r}") from None


def token(info: dict[str, Any], user: str, password: str) -> str:
    """A token for `user` from /v3/auth/authenticate."""
    return str(post(info, "/v3/auth/authenticate", {"name": user, "password": password})["token"])


def admin(info: dict[str, Any], path: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` to `path` as root (authenticated now)."""
    return post(info, path, body, token(info, info["root_user"], info["root_password"]))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def add_app_user(info: dict[str, Any], as_root: str | None = None) -> None:
    """Adds the application user (with its password) and grants it its role, which may
    read and write every key: as root, or before auth is enabled with `as_root=""`."""
    root_token = token(info, info["root_user"], info["root_password"]) if as_root is None else as_root
    post(info, "/v3/auth/user/add", {"name": info["user"], "password": info["password"]}, root_token)
    post(info, "/v3/auth/user/grant", {"user": info["user"], "role": APP_USER}, root_token)


def enable_auth(info: dict[str, Any]) -> None:
    """Users root (role root) and the application's (role with read-write on every key:
    the range from "\\0" to "\\0" is every key), then `auth enable`."""
    post(info, "/v3/auth/role/add", {"name": ROOT_USER})
    post(info, "/v3/auth/user/add", {"name": ROOT_USER, "password": info["root_password"]})
    post(info, "/v3/auth/user/grant", {"user": ROOT_USER, "role": ROOT_USER})
    post(info, "/v3/auth/role/add", {"name": APP_USER})
    post(info, "/v3/auth/role/grant", {"name": APP_USER, "perm": {"permType": "READWRITE", "key": _b64(b"\0"), "range_end": _b64(b"\0")}})
    add_app_user(info, as_root="")
    post(info, "/v3/auth/enable", {})


def healthy(info: dict[str, Any]) -> bool:
    try:
        with urllib.request.urlopen(info["url"] + "/health", timeout=2, context=client_context(info)) as answer:
            return b"true" in answer.read()
    except OSError:
        return False


def log_tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, errors="replace") as log:
            every = log.readlines()
    except OSError:
        return "(no log)"
    taken = next((line for line in every if ADDRESS_IN_USE.search(line)), "")
    return taken + "".join(every[-lines:])


def stop_pid(pid: int, timeout: float = 20) -> None:
    """SIGTERM to `pid`, SIGKILL if it is still there after `timeout` s; returns once it
    is gone (or a zombie its parent has not reaped)."""

    def gone() -> bool:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except OSError:
            return True

    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            return
        ends = time.monotonic() + timeout
        while not gone() and time.monotonic() < ends:
            time.sleep(0.05)
        if gone():
            return
    raise RuntimeError(f"etcd {pid} did not stop")


def our_data_dir(pid: int) -> str | None:
    """The --data-dir of process `pid` when it is an etcd this script started (its data
    dir is in one of our temp dirs), else None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().decode(errors="replace").split("\0")
    except OSError:
        return None
    if not argv or os.path.basename(argv[0]) != "etcd" or "--data-dir" not in argv[:-1]:
        return None
    data_dir = argv[argv.index("--data-dir") + 1]
    root = os.path.dirname(data_dir)
    if os.path.dirname(root) != tempfile.gettempdir() or not os.path.basename(root).startswith(PREFIX):
        return None
    return data_dir


def start(auth_token_ttl: int | None = None) -> dict[str, Any]:
    """Starts a TLS + auth etcd; returns its info (see the module's docstring). On any
    failure what was started is stopped and the temp dir removed."""
    assert os.access(ETCD, os.X_OK), "needs etcd (apt-get install -y etcd-server)"
    assert os.access(OPENSSL, os.X_OK), "needs openssl (apt-get install -y openssl)"
    root = tempfile.mkdtemp(prefix=PREFIX)
    os.chmod(root, 0o700)
    try:
        files = make_certificates(root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    log_file = os.path.join(root, "etcd.log")
    started: list[subprocess.Popen[bytes]] = []

    def on(ports: list[int]) -> dict[str, Any]:
        client, peer = ports
        data_dir = os.path.join(root, "data")
        shutil.rmtree(data_dir, ignore_errors=True)
        url, peer_url = f"https://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        command = [
            ETCD, "--name", "secure", "--data-dir", data_dir,
            "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"secure={peer_url}", "--initial-cluster-state", "new",
            "--cert-file", os.path.join(root, "server.crt"), "--key-file", os.path.join(root, "server.key"),
            "--trusted-ca-file", files["ca_file"], "--client-cert-auth",
            "--log-level", "warn", "--logger", "zap",
        ]
        if auth_token_ttl is not None:
            command += ["--auth-token-ttl", str(auth_token_ttl)]
        with open(log_file, "wb") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        started.append(process)
        info: dict[str, Any] = {
            "url": url, **files, "user": APP_USER, "password": secrets.token_hex(12),
            "root_user": ROOT_USER, "root_password": secrets.token_hex(12),
            "pid": process.pid, "data_dir": data_dir, "log_file": log_file, "root": root,
        }
        try:
            ends = time.monotonic() + START_TIMEOUT_S
            while not healthy(info):
                if process.poll() is not None:
                    raise RuntimeError(f"etcd exited with {process.returncode}:\n{log_tail(log_file)}")
                if time.monotonic() > ends:
                    raise RuntimeError(f"etcd did not serve within {START_TIMEOUT_S} s:\n{log_tail(log_file)}")
                time.sleep(0.1)
            enable_auth(info)
        except BaseException:
            stop_pid(process.pid)
            process.wait()
            raise
        hand_over_ports(ports, process.pid)
        return info

    try:
        info = start_on_ports(2, on)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    info["process"] = started[-1]
    return info


def stop(pid: int) -> None:
    """Stops the etcd `pid` this script started and removes its temp dir; a PID that is
    not one of ours is refused (ValueError), one already gone is fine."""
    data_dir = our_data_dir(pid)
    if data_dir is None:
        if os.path.exists(f"/proc/{pid}"):
            raise ValueError(f"{pid} is not an etcd started by {os.path.basename(__file__)}")
        return
    stop_pid(pid)
    shutil.rmtree(os.path.dirname(data_dir), ignore_errors=True)
    for port in os.listdir(PORT_LOCKS) if os.path.isdir(PORT_LOCKS) else []:
        path = os.path.join(PORT_LOCKS, port)
        try:
            with open(path) as lock:
                if lock.read().strip() == str(pid):
                    os.unlink(path)  # its ports are free again
        except OSError:
            pass


class SecureEtcd:
    """`with SecureEtcd() as etcd:` a started TLS + auth etcd (`etcd.info`), stopped by
    PID on leaving the block, also on a failure."""

    def __init__(self, auth_token_ttl: int | None = None) -> None:
        self.info = start(auth_token_ttl)
        self.process: subprocess.Popen[bytes] = self.info.pop("process")

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["info"][name]
        except KeyError:
            raise AttributeError(name) from None

    def admin(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return admin(self.info, path, body)

    def add_user(self) -> None:
        """The application user again (after a test deleted it), same password."""
        add_app_user(self.info)

    def stop(self) -> None:
        if self.process.poll() is None:
            stop_pid(self.process.pid)
        self.process.wait()
        shutil.rmtree(self.info["root"], ignore_errors=True)

    def __enter__(self) -> SecureEtcd:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    started = commands.add_parser("start", help="start one, print its JSON, leave it running")
    started.add_argument("--json", action="store_true", help="print JSON (the only output format)")
    started.add_argument("--auth-token-ttl", type=int, default=None, help="etcd's --auth-token-ttl, seconds")
    stopped = commands.add_parser("stop", help="stop one by PID and remove its temp dir")
    stopped.add_argument("pid", type=int)
    admins = commands.add_parser("admin", help="POST a JSON body to a gateway path as root")
    admins.add_argument("info", help="the JSON file `start` printed")
    admins.add_argument("path")
    admins.add_argument("body")
    args = parser.parse_args()
    if args.command == "start":
        info = start(args.auth_token_ttl)
        info.pop("process")
        print(json.dumps(info), flush=True)
    elif args.command == "stop":
        stop(args.pid)
    else:
        with open(args.info) as file:
            saved: dict[str, Any] = json.load(file)
        print(json.dumps(admin(saved, args.path, json.loads(args.body))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["PORT_LOCKS", "SecureEtcd", "admin", "start", "stop", "token"]
