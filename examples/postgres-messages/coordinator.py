"""The rebalance coordinator: grows the messages shards from 5 to 10 while the services
run, the two ways docs/rebalancing.md describes.

    python coordinator.py --etcd URL --postgres HOST:PORT background   # run A
    python coordinator.py --etcd URL --postgres HOST:PORT lazy         # run B

`background` (run A, a vbucket dictionary): `plan_rebalance` adding shard_6..shard_10,
written with a compare-and-swap on the document it was planned from; the fence of every
shard raised to the new epoch; then batch by batch: copy each moving vbucket old → new
(`ON CONFLICT DO NOTHING`), `complete_moves` for the batch (another CAS), delete the
batch's rows from the old owners.

`lazy` (run B, the 1-based `user_id % n ?: n`): one etcd transaction puts `topology` =
modulo 10 and `previous` = modulo 5; the fences rise; the services move users on their
first reads; after `--wait` seconds a sweep moves the users nobody read; then the final
epoch, without `previous`.

Both then widen the reference table's group (`catalog`, the nodes that keep `plans`
whole) from the start's five nodes to all ten, with the core's `node_group_set`: the
fences of the group's nodes raised to the next epoch, `plans` copied to the joining
nodes from each row's read node, then the next document published (README.md,
"Widening the reference table").

Both keep no state of their own: started again after a kill, they read etcd and the
shards and go on (the vbuckets still `migrating` are copied again, already completed
ones are not; rows of vbuckets a shard does not own under the current epoch are
deleted). A plan whose source document is no longer the one in etcd is refused (the
CAS fails, exit status 3).

stdout: one JSON line per event (`switched`, `resumed`, `copy`, `batch`, `widened`, `done`);
stderr: log lines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import shardroute
from shardroute.etcd import Etcd, same_revision
from shards import (
    CATALOG, FENCE_OK, PLANS, PREVIOUS, SHARD_NAMES, SWEEP_GROUP, TENANT_TABLE, TOPOLOGY, Pace, Shards, modulo, nodes, now_ms,
)

EXIT_STALE_PLAN = 3


class StalePlan(Exception):
    """The document a plan started from is no longer the one in etcd."""


def expect(document: Any, epoch: int | None) -> None:
    """Refuses to plan unless etcd holds the epoch the operator planned from."""
    if epoch is not None and document["epoch"] != epoch:
        raise StalePlan(f"refused: planned from epoch {epoch}, but etcd holds epoch {document['epoch']}")


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields, "at": round(time.time(), 3)}), flush=True)


def log(message: str) -> None:
    print(f"[coordinator] {message}", file=sys.stderr, flush=True)


class Coordinator:
    def __init__(self, etcd: Etcd, postgres: str) -> None:
        self.etcd = etcd
        self.shards = Shards(postgres, SHARD_NAMES, "coordinator")

    def read(self) -> tuple[Any, int]:
        """The document in etcd (JSON, as json.loads gives it: the core checks it) and its revision."""
        text, revision = self.etcd.get(TOPOLOGY)
        if text is None:
            raise SystemExit(f"no topology in etcd at {TOPOLOGY}")
        document: Any = json.loads(text)
        return document, revision

    def commit(self, source: Any, revision: int, document: Any, **also: Any) -> int:
        """Writes `document` in place of `source` (read at `revision`): a compare-and-swap,
        so a plan made from an epoch that is no longer current is refused. `also`:
        `previous=text` puts the previous document in the same transaction,
        `drop_previous=True` deletes it."""
        # The core's follower builds the write: never publish what a service's follower
        # would refuse (an invalid document, an epoch other than the source's + 1).
        follower = shardroute.TopologyFollower()
        follower.offer(json.dumps(source), revision, 0)
        write = follower.publish(document)
        puts = {TOPOLOGY: write["document"]}
        compare = [same_revision(TOPOLOGY, write["expected_revision"] or 0)]
        if "previous" in also:
            puts[PREVIOUS] = also["previous"]
            compare.append(same_revision(PREVIOUS, 0))
        written = self.etcd.txn(compare, puts, deletes=(PREVIOUS,) if also.get("drop_previous") else ())
        if not written:
            current, _ = self.read()
            raise StalePlan(
                f"refused: planned from epoch {source['epoch']} (etcd revision {revision}), "
                f"but etcd now holds epoch {current['epoch']}"
            )
        return written

    def raise_fences(self, epoch: int) -> None:
        for shard in SHARD_NAMES:
            self.shards.raise_fence(shard, epoch)

    def widen_reference(self, document: Any, revision: int) -> tuple[Any, int]:
        """After the growth: the reference group `catalog` widened to every node of
        `document` (read at `revision`), one more epoch; returns the document in etcd
        and its revision. A document without the group, or with it already wide (a
        restart after the publish), is left as it is.

        The order (README.md, "Widening the reference table"): (1) the fences of the
        group's nodes raised to the next epoch, so no write under the current epoch
        (whose `route_write` names those nodes only) commits on them from then on: every
        acknowledged `plans` write is now on every node of the group; (2) `plans` copied
        to the joining nodes, each row from the node the current router reads it from;
        (3) the next document published (CAS). Until (3), statements under the current
        epoch on the group's nodes are refused and retried (the services re-read etcd);
        after it, every write goes to all the nodes of the wider group, and every read,
        of a joining node too, finds every acknowledged write."""
        every = [node["id"] for node in document["nodes"]]
        if CATALOG not in document.get("node_groups", {}) or document["node_groups"][CATALOG] == every:
            return document, revision
        began = time.monotonic()
        edit = shardroute.apply(document, {"op": "node_group_set", "group": CATALOG, "nodes": every})
        following = edit["topology"]
        joining = [node for node in edit["to"] if node not in edit["from"]]
        epoch = following["epoch"]
        for node in edit["from"]:
            self.shards.raise_fence(node, epoch)
        fenced_ms = round((time.monotonic() - began) * 1000, 1)
        # Each row from the node the current router reads it from (its pick); a row missing
        # there (a first write refused part way, never acknowledged) is left to its writer,
        # who writes it again to the whole wider group.
        reads = shardroute.Router(document).table(PLANS)
        rows = [
            row for node in edit["from"]
            for row in self.shards.read(node, epoch, f"SELECT plan, max_messages, written_by FROM {PLANS} ORDER BY plan")
            if reads.node(row[0]) == node
        ]
        copied = sum(self.shards.copy_reference(node, epoch, rows) for node in joining)
        revision = self.commit(document, revision, following)
        self.raise_fences(epoch)
        emit("widened", group=CATALOG, epoch=epoch, nodes_before=len(edit["from"]), joined=joining, rows=len(rows),
             rows_copied=copied, fenced_ms=fenced_ms, ms=round((time.monotonic() - began) * 1000, 1))
        return following, revision

    # -- run A ----------------------------------------------------------------------------

    def owned(self, document: Any) -> dict[str, list[int]]:
        """Shard -> the vbuckets whose rows it may hold: those it owns under the
        dictionary, and those it receives while a forward map is in force."""
        router = shardroute.Router(document)
        sides = [router]
        if "forward_map" in document["strategy"]:
            sides.append(shardroute.Migration.of_dictionary(router).after)
        owned: dict[str, set[int]] = {shard: set() for shard in SHARD_NAMES}
        for vbucket in range(document["strategy"]["vbuckets"]):
            for side in sides:
                owned[side.shard_owner(vbucket)].add(vbucket)
        return {shard: sorted(vbuckets) for shard, vbuckets in owned.items()}

    def sweep_unowned(self, document: Any) -> int:
        """Deletes from every shard the rows of vbuckets it does not own under
        `document` (what a copy killed between its switch and its delete left)."""
        deleted = 0
        tables = ["messages", TENANT_TABLE] if "tenants" in document else ["messages"]
        for shard, vbuckets in self.owned(document).items():
            for table in tables:
                deleted += self.shards.write(
                    shard, document["epoch"], f"DELETE FROM {table} WHERE NOT (vbucket = ANY(%s)) AND {FENCE_OK}", (vbuckets,)
                )
        return deleted

    def background(self, batch_size: int, pace: Pace, expect_epoch: int | None) -> None:
        started = time.monotonic()
        document, revision = self.read()
        expect(document, expect_epoch)
        strategy = document["strategy"]
        resumed = "forward_map" in strategy or len(document["nodes"]) == len(SHARD_NAMES)
        if not resumed:
            plan = shardroute.apply(document, {"op": "plan_rebalance", "add": nodes(10)[5:]})
            source, document = document, plan["topology"]
            revision = self.commit(source, revision, document)
            self.raise_fences(document["epoch"])
            moving = shardroute.Migration.of_dictionary(shardroute.Router(document)).moving_shards()
            # With every fence raised, no write lands on an old owner of a moving
            # vbucket any more: what is there now is exactly what the copy moves.
            to_move = sum(
                self.shards.read(old, document["epoch"], "SELECT count(*) FROM messages WHERE vbucket = ANY(%s)",
                                 ([v for v, o, _ in moving if o == old],))[0][0]
                for old in {old for _, old, _ in moving}
            )
            # The tenants' channels (a document with `tenants`) live in vbuckets too: the
            # same copy and delete move them, in their own table.
            tenant_to_move = sum(
                self.shards.read(old, document["epoch"], f"SELECT count(*) FROM {TENANT_TABLE} WHERE vbucket = ANY(%s)",
                                 ([v for v, o, _ in moving if o == old],))[0][0]
                for old in {old for _, old, _ in moving}
            ) if "tenants" in document else 0
            emit("switched", epoch=document["epoch"], moving_vbuckets=len(moving), rows_to_move=to_move,
                 tenant_rows_to_move=tenant_to_move)
        else:
            # A restart: the fence of the current epoch may never have been raised.
            self.raise_fences(document["epoch"])
            cleaned = self.sweep_unowned(document)
            emit("resumed", epoch=document["epoch"], migrating=len(strategy.get("states", {})), rows_deleted=cleaned)
        copied = already = tenant_copied = 0
        number = 0
        # Rows this run copied into each new owner, and how many there were when it last
        # refreshed the owner's statistics (Shards.analyze): refreshed each time they double.
        loaded: dict[str, int] = {}
        analyzed_at: dict[str, int] = {}
        while "forward_map" in document["strategy"]:
            # The core's background session names the next batch. Its cursor is the
            # document itself: complete_moves drops a batch's vbuckets from the moving
            # set, so the next batch always starts at 0, and a restarted coordinator
            # resumes where the stored document says.
            session = shardroute.MigrationSession(shardroute.Migration.of_dictionary(shardroute.Router(document)), "background")
            batch = session.copy_batch(0, batch_size)["units"]
            if not batch:
                break
            for vbucket, old, new in batch:
                began = now_ms()
                read, inserted = self.shards.copy_vbucket(vbucket, old, new, session.fence_epoch)
                copied += inserted
                already += read - inserted
                loaded[new] = loaded.get(new, 0) + inserted
                if loaded[new] >= 2 * analyzed_at.get(new, 0) and loaded[new] > 0:
                    self.shards.analyze(new)
                    analyzed_at[new] = loaded[new]
                tenant_read = tenant_inserted = 0
                if "tenants" in document:
                    tenant_read, tenant_inserted = self.shards.copy_tenant_vbucket(vbucket, old, new, session.fence_epoch)
                    tenant_copied += tenant_inserted
                emit("copy", batch=number, vbucket=vbucket, rows=read, inserted=inserted, tenant_rows=tenant_read,
                     ms=now_ms() - began)
                pace.rest(session, began)
            source = document
            document = shardroute.apply(source, {"op": "complete_moves", "vbuckets": [v for v, _, _ in batch]})["topology"]
            revision = self.commit(source, revision, document)
            deleted = 0
            for vbucket, old, _ in batch:
                began = now_ms()
                deleted += self.shards.write(old, document["epoch"], f"DELETE FROM messages WHERE vbucket = %s AND {FENCE_OK}", (vbucket,))
                if "tenants" in document:
                    deleted += self.shards.write(old, document["epoch"], f"DELETE FROM {TENANT_TABLE} WHERE vbucket = %s AND {FENCE_OK}", (vbucket,))
                pace.rest(session, began)
            emit("batch", batch=number, epoch=document["epoch"], vbuckets=len(batch), deleted=deleted)
            number += 1
        leftover = self.sweep_unowned(document)
        document, revision = self.widen_reference(document, revision)
        emit(
            "done", mode="background", epoch=document["epoch"], resumed=resumed, rows_copied=copied, tenant_rows_copied=tenant_copied,
            rows_already_there=already, rows_deleted_by_sweep=leftover, seconds=round(time.monotonic() - started, 3),
            worked_ms=pace.worked_ms, rested_ms=pace.rested_ms,
        )

    # -- run B ----------------------------------------------------------------------------

    def lazy(self, wait: float, pace: Pace, expect_epoch: int | None) -> None:
        started = time.monotonic()
        found, _ = self.etcd.get_many([TOPOLOGY, PREVIOUS])
        (text, revision), (previous_text, _) = found[TOPOLOGY], found[PREVIOUS]
        if text is None:
            raise SystemExit(f"no topology in etcd at {TOPOLOGY}")
        document: Any = json.loads(text)
        expect(document, expect_epoch)
        resumed = previous_text is not None or len(document["nodes"]) == len(SHARD_NAMES)
        if previous_text is None and len(document["nodes"]) == len(SHARD_NAMES):
            document, _ = self.widen_reference(document, revision)
            emit("done", mode="lazy", epoch=document["epoch"], resumed=True, users_moved=0, rows_moved=0,
                 seconds=round(time.monotonic() - started, 3))
            return
        if previous_text is None:
            source, document = document, modulo(10, document["epoch"] + 1, tenants="tenants" in document)
            previous_text = json.dumps(source)
            revision = self.commit(source, revision, document, previous=previous_text)
            self.raise_fences(document["epoch"])
            emit("switched", epoch=document["epoch"])
            # The services move users into the new owners from now on: their statistics
            # refreshed as the rows arrive (Shards.analyze), at 1/8, 1/4, 1/2 of the wait
            # and at its end (about each time the rows moved have doubled).
            previous_nodes = {node["id"] for node in json.loads(previous_text)["nodes"]}
            new_owners = [node["id"] for node in document["nodes"] if node["id"] not in previous_nodes]
            waited = 0.0
            for share in (0.125, 0.25, 0.5, 1.0):
                time.sleep(max(0.0, wait * share - waited))
                began = now_ms()
                for new in new_owners:
                    self.shards.analyze(new)
                waited = wait * share + (now_ms() - began) / 1000
        else:
            self.raise_fences(document["epoch"])
            emit("resumed", epoch=document["epoch"])
        migration = shardroute.Migration(shardroute.Router(previous_text), shardroute.Router(document))
        session = shardroute.MigrationSession(migration, "lazy")
        users_moved = rows_moved = keys_moved = tenant_rows_moved = 0
        for shard in SHARD_NAMES:
            began = now_ms()
            users = [row[0] for row in self.shards.read(shard, document["epoch"], "SELECT DISTINCT user_id FROM messages")]
            # The same moves a service makes on a first read (the session's lazy steps),
            # grouped by the core (`lazy_groups`: the keys that move, by their steps) and
            # made for a group of users at once.
            groups = [group for group in session.lazy_groups(users) if group["steps"]["read_from"] == shard]
            pace.rest(session, began)
            for group in groups:
                members = [users[index] for index in group["indices"]]
                for at in range(0, len(members), SWEEP_GROUP):
                    began = now_ms()
                    rows_moved += self.shards.move_users(members[at:at + SWEEP_GROUP], group["steps"])
                    users_moved += len(members[at:at + SWEEP_GROUP])
                    pace.rest(session, began)
            if "tenants" in document:
                # The tenants' channels: the keys the migration moves (the core's tenant
                # rule decides which: a placed tenant's stay in its group), the same steps.
                keys = [row[0] for row in self.shards.read(shard, document["epoch"], f"SELECT DISTINCT key FROM {TENANT_TABLE}")]
                for group in session.lazy_groups(keys):
                    if group["steps"]["read_from"] != shard:
                        continue
                    group_keys = [keys[index] for index in group["indices"]]
                    began = now_ms()
                    tenant_rows_moved += self.shards.move_tenant_keys(group_keys, group["steps"])
                    keys_moved += len(group_keys)
                    pace.rest(session, began)
        source, document = document, modulo(10, document["epoch"] + 1, tenants="tenants" in document)
        revision = self.commit(source, revision, document, drop_previous=True)
        document, revision = self.widen_reference(document, revision)
        emit("done", mode="lazy", epoch=document["epoch"], resumed=resumed, users_moved=users_moved,
             rows_moved=rows_moved, tenant_keys_moved=keys_moved, tenant_rows_moved=tenant_rows_moved, seconds=round(time.monotonic() - started, 3),
             worked_ms=pace.worked_ms, rested_ms=pace.rested_ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--etcd", required=True)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--batch", type=int, default=16, help="vbuckets per complete_moves (run A)")
    parser.add_argument("--throttle-ms", type=float, default=20, help="shortest pause between two steps of the copy or the sweep")
    parser.add_argument("--duty", type=float, help="largest share of the wall time the copy or the sweep works (default: the core's, 5%%)")
    parser.add_argument("--wait", type=float, default=6, help="seconds of lazy moves before the sweep (run B)")
    parser.add_argument("--expect-epoch", type=int, help="refuse unless etcd holds this epoch when the plan starts")
    parser.add_argument("mode", choices=["background", "lazy"])
    args = parser.parse_args()
    coordinator = Coordinator(Etcd(args.etcd), args.postgres)
    pace = Pace(None if args.duty is None else round(args.duty * 1000), round(args.throttle_ms))
    try:
        if args.mode == "background":
            coordinator.background(args.batch, pace, args.expect_epoch)
        else:
            coordinator.lazy(args.wait, pace, args.expect_epoch)
    except StalePlan as err:
        log(str(err))
        emit("refused", reason=str(err))
        return EXIT_STALE_PLAN
    return 0


if __name__ == "__main__":
    sys.exit(main())
