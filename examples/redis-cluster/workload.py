"""The Python service of the example: writes and reads its own keys through
``shardroute.redis.ClusterClient`` while the cluster changes, and reports what it saw.

Driven by `run.py` over stdin/stdout, one line each way (the Node service,
`workload.mjs`, speaks the same protocol; `README.md` specifies it):

    load            write every key (MSET per hash-tag group), read them back with
                    pipelines grouped by node
    churn <phase>   write and read random keys until `stop`; in the phases that
                    change masters (WAITED) each write is `SET` + `WAIT 1`, so it counts
                    as acknowledged only once a replica has it. An error the client raises
                    is counted by kind (`app_errors`) and the churn goes on
    stop [<t>]      end the churn; with <t>, the wall-clock time (s since the epoch) a
                    replica was promoted during it, its answer also says how late after
                    the promotion the churn's commands ended (`after_promotion`)
    settle          refresh the table, read every key once more: MOVED must be 0
    verify          read every key: its last acknowledged value, or a write the server
                    accepted but never acknowledged (reported apart), else lost/stale
    quit

Each command ends with one JSON line: {"event": "done", "command", "phase", "ops",
"moved", "ask", "errors", "refreshes", "longest_redirect_chain", "p50_us", "p99_us", ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
import time
from typing import Any

from shardroute.redis import AsyncClusterClient, ClusterClient

GROUP = 10  # keys per hash tag, written together with one MSET
WAITED = ("failover", "pause", "pause-2", "graceful")  # phases whose writes are SET + WAIT 1


def after_promotion(spans: list[tuple[float, float, str]], promoted_at: float) -> dict[str, Any]:
    """How the commands of a churn ended relative to a promotion at `promoted_at` (each
    span is a command's wall-clock start and end, in seconds, and its name; `README.md`,
    "A paused primary", defines the fields the same way for both services):

    - `late_after_promotion_ms`: the most any command ended after the promotion or after
      its own start, whichever is later: max of end - max(start, promoted_at) over the
      commands that ended after the promotion (0 when none did). A command in flight
      across the promotion is counted from the promotion, a later one from its start;
      "every command finishes within promotion + 1 s" is this < 1000.
    - `in_flight_at_promotion`: commands that started at or before the promotion and
      ended after it (the pause held them): at least one, or the pause tested nothing.
    - `commands_after_promotion`: commands that ended after the promotion.
    - `latest_command`: the command that set `late_after_promotion_ms`, its start and
      end in ms from the promotion (to tell a stall from a slow command).
    """
    after = [span for span in spans if span[1] > promoted_at]
    latest = max(after, key=lambda span: span[1] - max(span[0], promoted_at), default=None)
    return {
        "promoted_at": promoted_at,
        "late_after_promotion_ms": round((latest[1] - max(latest[0], promoted_at)) * 1000, 1) if latest else 0.0,
        "in_flight_at_promotion": sum(1 for start, _, _ in after if start <= promoted_at),
        "commands_after_promotion": len(after),
        "latest_command": {
            "command": latest[2], "started_ms": round((latest[0] - promoted_at) * 1000, 1),
            "ended_ms": round((latest[1] - promoted_at) * 1000, 1),
        } if latest else None,
    }


class Blocking:
    """``AsyncClusterClient`` driven from the service's threads: every call runs on one
    event loop of its own thread, so the service's code is the same for both clients."""

    def __init__(self, client: AsyncClusterClient) -> None:
        self.client = client
        self.stats = client.stats
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        def call(*args: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(method(*args), self.loop).result()

        call.__name__ = name
        return call

    @property
    def router(self) -> Any:
        return asyncio.run_coroutine_threadsafe(self.client.router(), self.loop).result()


class Service:
    def __init__(self, seeds: list[str], prefix: str, keys: int, use_asyncio: bool) -> None:
        config: Any = {"retry_budget_ms": 30_000}
        self.client: Any = Blocking(AsyncClusterClient(seeds, config=config)) if use_asyncio else ClusterClient(seeds, config=config)
        self.keys = [f"{{{prefix}:{i // GROUP}}}:{i % GROUP}" for i in range(keys)]
        self.acknowledged: dict[str, str] = {}  # key -> last value a write was acknowledged with
        self.unacknowledged: dict[str, list[str]] = {}  # key -> values written since, not acknowledged
        self.version = 0
        self.latencies: list[float] = []
        self.spans: list[tuple[float, float, str]] = []  # each command's wall-clock (start, end) in s, and name
        self.promoted_at: float | None = None  # given with `stop` after a promotion
        self.stale_reads = 0
        self.app_errors: dict[str, int] = {}  # what the client raised to the service, by kind
        self.stop = threading.Event()

    def value(self, index: int) -> str:
        self.version += 1
        return f"{index}:{self.version}"

    def report(self, command: str, phase: str, ops: int, **extra: Any) -> None:
        stats = self.client.stats
        samples = sorted(self.latencies)

        def percentile(p: float) -> float:
            return round(samples[min(len(samples) - 1, int(p * len(samples)))] * 1e6, 1) if samples else 0.0

        line = {
            "event": "done", "command": command, "phase": phase, "ops": ops, "moved": stats.moved, "ask": stats.ask,
            "errors": stats.errors, "error_kinds": stats.error_kinds, "refreshes": stats.refreshes,
            "longest_redirect_chain": stats.longest_redirect_chain, "stale_reads": self.stale_reads,
            "p50_us": percentile(0.50), "p99_us": percentile(0.99), "epoch": self.client.router.epoch,
            "app_errors": self.app_errors, **extra,
        }
        print(json.dumps(line), flush=True)
        stats.reset()
        self.latencies = []
        self.spans = []
        self.stale_reads = 0
        self.app_errors = {}

    def timed(self, call: Any, *args: Any) -> Any:
        """`call(*args)`; its latency recorded when it returns, its wall-clock span
        (`spans`) also when it raises."""
        began = time.time()
        start = time.perf_counter()
        try:
            result = call(*args)
        finally:
            self.spans.append((began, time.time(), getattr(call, "__name__", "?")))
        self.latencies.append(time.perf_counter() - start)
        return result

    # -- commands ------------------------------------------------------------------

    def load(self) -> None:
        for start in range(0, len(self.keys), GROUP):
            group = {self.keys[i]: self.value(i) for i in range(start, min(start + GROUP, len(self.keys)))}
            self.timed(self.client.mset, group)
            self.acknowledged.update(group)
        ops = len(self.keys) // GROUP
        for start in range(0, len(self.keys), 1000):
            batch = self.keys[start:start + 1000]
            values = self.timed(self.client.pipeline_get, batch)
            self.check(batch, values)
            ops += len(batch)
        self.report("load", "steady", ops, keys=len(self.keys))

    def churn(self, phase: str) -> None:
        try:
            self._churn(phase)
        except Exception as err:  # noqa: BLE001 - reported, never a silent hang
            self.stop.wait()
            self.stop.clear()
            self.promoted_at = None
            self.report("churn", phase, 0, failure=repr(err))

    def _churn(self, phase: str) -> None:
        wait = phase in WAITED
        ops = unacknowledged = 0
        self.spans = []
        rng = random.Random(phase)
        while not self.stop.is_set():
            index = rng.randrange(len(self.keys))
            key, value = self.keys[index], self.value(index)
            try:
                if not wait:
                    self.timed(self.client.set, key, value)
                    self.acknowledged[key] = value
                elif self.timed(self.client.set_and_wait, key, value, 1, 500) >= 1:
                    self.acknowledged[key] = value
                    self.unacknowledged.pop(key, None)
                else:
                    self.unacknowledged.setdefault(key, []).append(value)
                    unacknowledged += 1
            except Exception as err:  # noqa: BLE001 - what the application sees, counted
                # The write may or may not have been applied: not acknowledged.
                self.unacknowledged.setdefault(key, []).append(value)
                self.count(err)
            read = self.keys[rng.randrange(len(self.keys))]
            try:
                self.check([read], [self.timed(self.client.get, read)])
            except Exception as err:  # noqa: BLE001
                self.count(err)
            ops += 2
        self.stop.clear()
        promoted_at, self.promoted_at = self.promoted_at, None
        extra = after_promotion(self.spans, promoted_at) if promoted_at is not None else {}
        self.report("churn", phase, ops, unacknowledged_writes=unacknowledged, **extra)

    def count(self, err: Exception) -> None:
        kind = type(err).__name__
        self.app_errors[kind] = self.app_errors.get(kind, 0) + 1
        print(json.dumps({"event": "app_error", "kind": kind, "message": str(err)[:300]}), file=sys.stderr, flush=True)

    def settle(self, phase: str) -> None:
        # The change is over: refresh once, as a client's periodic refresh would. MOVEDs
        # during the change refresh at most every `refresh_interval`, so slots moved in
        # the last such window and not touched since may still be stale here.
        self.client.refresh()
        for start in range(0, len(self.keys), 1000):
            batch = self.keys[start:start + 1000]
            self.check(batch, self.timed(self.client.pipeline_get, batch))
        self.report("settle", phase, len(self.keys))

    def verify(self) -> None:
        lost = stale = unreplicated_lost = unreplicated_kept = 0
        for start in range(0, len(self.keys), 1000):
            batch = self.keys[start:start + 1000]
            for key, got in zip(batch, self.timed(self.client.pipeline_get, batch)):
                value = got.decode() if isinstance(got, bytes) else got
                pending = self.unacknowledged.get(key, [])
                if pending and value in pending:
                    unreplicated_kept += 1
                elif value == self.acknowledged.get(key):
                    unreplicated_lost += bool(pending)
                elif value is None:
                    lost += 1
                else:
                    stale += 1
        self.report(
            "verify", "end", len(self.keys), lost=lost, stale=stale,
            unreplicated_writes_lost=unreplicated_lost, unreplicated_writes_kept=unreplicated_kept,
        )

    def check(self, keys: list[str], values: list[Any]) -> None:
        """A read must see the last acknowledged value or a later unacknowledged one."""
        for key, got in zip(keys, values):
            value = got.decode() if isinstance(got, bytes) else got
            if value != self.acknowledged.get(key) and value not in self.unacknowledged.get(key, []):
                self.stale_reads += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--prefix", default="py")
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--asyncio", action="store_true", help="use AsyncClusterClient (redis.asyncio)")
    args = parser.parse_args()
    service = Service(args.seeds.split(","), args.prefix, args.keys, args.asyncio)
    print(json.dumps({"event": "ready", "epoch": service.client.router.epoch}), flush=True)
    worker: threading.Thread | None = None
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "stop":
            service.promoted_at = float(argument) if argument else None
            service.stop.set()
            if worker is not None:
                worker.join()
                worker = None
        elif command == "churn":
            worker = threading.Thread(target=service.churn, args=(argument,))
            worker.start()
        elif command in ("load", "settle", "verify"):
            try:
                getattr(service, command)(*([argument] if command == "settle" else []))
            except Exception as err:  # noqa: BLE001 - reported to run.py, which fails
                service.report(command, argument or command, 0, failure=repr(err))
        elif command == "quit":
            break
    service.client.close()


if __name__ == "__main__":
    main()
