"""The example's servers on 127.0.0.1: one PostgreSQL and one etcd, run by this script.

`Postgres` runs Debian's PostgreSQL 15 (`initdb`, then `postgres` itself, so the
process we hold is the postmaster) as an unprivileged user in a temp data directory
that user owns, on a reserved port of 127.0.0.1 (`start_on_ports`), with the databases `shard_1` ..
`shard_10` and the example's schema in each. When this script runs as root the server
runs as the `postgres` system user (initdb refuses root); otherwise as the caller.

`EtcdServer` (examples/harness.py) runs Debian's `etcd` (3.4) with a temp data directory on two reserved ports; its v3
JSON gateway answers on the client port.

`Servers` is both, stopped by PID when the context ends, also on failure and on
SIGTERM/SIGINT of the running script.

    with Servers() as servers:
        servers.postgres.address     # "127.0.0.1:PORT"
        servers.etcd.url             # "http://127.0.0.1:PORT"
        servers.reset()              # empty tables, fences at 0, no etcd keys
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import psycopg

from shardroute.etcd import Etcd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # examples/harness.py
from harness import EtcdServer, ServerProcess, StoppedOnExit, start_on_ports  # noqa: E402
from shards import ORACLE, PREFIX, SHARD_NAMES  # noqa: E402

PG_BIN = "/usr/lib/postgresql/15/bin"
# The shards, and the unsharded copy the queries are checked against (the same schema;
# only its `messages` is used).
DATABASES = [*SHARD_NAMES, ORACLE]

SCHEMA = """
CREATE TABLE messages (
    id      bigint PRIMARY KEY,
    user_id bigint NOT NULL,
    vbucket integer NOT NULL,
    time    timestamptz NOT NULL,
    body    text NOT NULL,
    sender  text NOT NULL,
    sender_id bigint               -- the user who sent it (the global index's term); NULL in the edge example
);
CREATE INDEX ON messages (user_id, time);
CREATE INDEX ON messages (vbucket);
CREATE INDEX ON messages (time);
CREATE TABLE by_sender (
    sender_id  bigint NOT NULL,
    message_id bigint NOT NULL,
    user_id    bigint NOT NULL,
    PRIMARY KEY (sender_id, message_id)
);
CREATE TABLE fence (min_epoch bigint NOT NULL);
INSERT INTO fence VALUES (0);
CREATE TABLE moved (unit bigint PRIMARY KEY);
CREATE TABLE moves (unit bigint NOT NULL);
CREATE TABLE tenant_messages (             -- tenants' channels, keyed "<tenant>:<channel>"
    id      bigint PRIMARY KEY,
    key     text NOT NULL,
    tenant  text NOT NULL,
    vbucket integer NOT NULL,              -- the key's vbucket (run A), 0 in run B
    time    timestamptz NOT NULL,
    body    text NOT NULL,
    sender  text NOT NULL
);
CREATE INDEX ON tenant_messages (key);
CREATE INDEX ON tenant_messages (vbucket);
CREATE TABLE plans (                       -- a reference table: whole on every node of its group
    plan         text PRIMARY KEY,
    max_messages bigint NOT NULL,
    written_by   text NOT NULL
);
"""


class Postgres(ServerProcess):
    """One PostgreSQL server with databases shard_1..shard_10."""

    # PostgreSQL's fast shutdown: open sessions are ended, not waited for.
    stop_signal = signal.SIGINT

    def __init__(self, root: str, options: Sequence[str] = ()) -> None:
        """`options`: more `-c name=value` settings of the server (bench/postgres's
        `--statements` loads pg_stat_statements)."""
        assert os.path.exists(f"{PG_BIN}/postgres"), "needs PostgreSQL 15 (apt-get install -y postgresql)"
        self.options = [part for option in options for part in ("-c", option)]
        self.port = 0
        self.data = os.path.join(root, "postgres")
        self.log_path = os.path.join(root, "postgres.log")
        as_root = os.geteuid() == 0
        account = pwd.getpwnam("postgres") if as_root else pwd.getpwuid(os.geteuid())
        self.user = account.pw_name
        os.makedirs(self.data, mode=0o700)
        if as_root:
            # The temp root is root's; the server's user must reach and own its files.
            os.chmod(root, 0o755)
            os.chown(self.data, account.pw_uid, account.pw_gid)
        # As root the server runs as `postgres`; its log is a descriptor we open for it.
        user, group = (account.pw_uid, account.pw_gid) if as_root else (None, None)
        groups: list[int] | None = [] if as_root else None
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": self.data}
        subprocess.run(
            [f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, env=env, user=user, group=group, extra_groups=groups,
        )

        def start(ports: list[int]) -> None:
            """On a reserved port; "could not bind" in the error sends it to a fresh one."""
            self.port = ports[0]
            self.address = f"127.0.0.1:{self.port}"
            open(self.log_path, "wb").close()  # the last try's "could not bind" is not this one's
            self._start(env, user, group, groups)

        start_on_ports(1, start)
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as admin:
            for name in DATABASES:
                admin.execute(f"CREATE DATABASE {name}")
        for name in DATABASES:
            with psycopg.connect(self.dsn(name), autocommit=True) as shard:
                shard.execute(SCHEMA)
        with psycopg.connect(self.dsn(ORACLE), autocommit=True) as oracle:
            # The unsharded copy answers "by sender" from its own index.
            oracle.execute("CREATE INDEX ON messages (sender_id)")

    def _start(self, env: dict[str, str], user: int | None, group: int | None, groups: list[int] | None) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    f"{PG_BIN}/postgres", "-D", self.data, "-p", str(self.port),
                    "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                    "-c", "max_connections=300", "-c", "shared_buffers=128MB",
                    # A test server: durability across a crash of the machine is not the point.
                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                    *self.options,
                ],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                user=user, group=group, extra_groups=groups,
            )
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited:\n{self.log_tail()}")
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
                    break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"postgres did not answer:\n{self.log_tail()}") from None
                time.sleep(0.1)

    def dsn(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def reset(self) -> None:
        """Every shard empty, its fence at 0."""
        for name in DATABASES:
            with psycopg.connect(self.dsn(name), autocommit=True) as shard:
                shard.execute("TRUNCATE messages, by_sender, moved, moves, tenant_messages, plans")
                shard.execute("UPDATE fence SET min_epoch = 0")



class Servers(StoppedOnExit):
    """PostgreSQL and etcd, stopped by PID on exit, failure or SIGTERM/SIGINT."""

    def __init__(self, postgres_options: Sequence[str] = ()) -> None:
        self.root = tempfile.mkdtemp(prefix="shardroute-postgres-messages-")
        self.postgres_options = postgres_options
        self.postgres: Postgres | None = None
        self.etcd: EtcdServer | None = None
        self._stopped = False

    def start(self) -> None:
        self.postgres = Postgres(self.root, self.postgres_options)
        self.etcd = EtcdServer(self.root)

    def __enter__(self) -> Servers:
        servers: Servers = super().__enter__()
        return servers

    @property
    def pids(self) -> list[int]:
        return [server.pid for server in (self.postgres, self.etcd) if server is not None]

    def reset(self) -> None:
        """Fresh data for the next run: empty shards, fences at 0, no example keys in etcd."""
        assert self.postgres is not None and self.etcd is not None
        self.postgres.reset()
        Etcd(self.etcd.url).delete_prefix(PREFIX)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        for server in (self.postgres, self.etcd):
            if server is not None:
                server.stop()
        shutil.rmtree(self.root, ignore_errors=True)


if __name__ == "__main__":
    with Servers() as servers:
        assert servers.postgres is not None and servers.etcd is not None
        print(f"postgres {servers.postgres.address} (pid {servers.postgres.pid}), etcd {servers.etcd.url} (pid {servers.etcd.pid})")
        print("Ctrl-C stops both")
        signal.pause()
