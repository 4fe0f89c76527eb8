"""Routers shared by threads while another thread swaps epochs: no torn answer.

A `Router` is immutable: `replace` builds a new one and the application swaps its
reference (a single assignment, atomic in Python). Eight reader threads route 200,000
keys each through whatever router the shared cell holds, in batches that release the GIL
(uint64 arrays, and lists of text at or past the detach threshold) so that several threads
are inside the native code on the same router at once, while a writer thread swaps in 100
new epochs. The two pace each other so that the swaps are spread over the whole run (the
GIL would otherwise let the writer do them all in one turn): swap i waits until every
reader has done i/101 of its routes, and a reader waits before going further than one
swap's share ahead of the writer. Every batch must equal, key for key, what a router built alone from the same
document answers: a batch that mixed two topologies, or a router that changed under a
reader, fails. The answers' correctness is the conformance vectors' business; this test
proves that threads and swaps do not change them.

The free-threaded CPython build (3.13t) is not run: Debian 12's packages have no such
interpreter, PyPI distributes none, and the wheel is abi3, which free-threaded builds
cannot load.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from shardroute import Router, Topology
from shardroute_testing import doc

READERS = 8
ROUTES_PER_READER = 200_000
SWAPS = 100
BATCH = 2_000  # past the native module's detach threshold (1,024 keys): the GIL is released


def topology(epoch: int) -> Topology:
    """Epoch `epoch`'s document: 3 to 10 nodes, every epoch different from the last."""
    document: Topology = doc(3 + epoch % 8, {"type": "ring", "points_per_node": 40}, epoch=epoch)
    return document


NUMBERS = np.arange(BATCH, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
TEXTS = [f"user:{index}" for index in range(BATCH)]


def test_readers_never_see_a_torn_topology_while_epochs_swap() -> None:
    documents = [topology(epoch) for epoch in range(1, SWAPS + 2)]
    expected = {}
    for document in documents:
        alone = Router(document)
        expected[alone.epoch] = (alone.route_many(NUMBERS).tolist(), alone.node_many(TEXTS))
    assert len({str(answers) for answers in expected.values()}) > 1, "the epochs must route differently"

    cell = [Router(documents[0])]
    progress = [0] * READERS
    seen: list[set[int]] = [set() for _ in range(READERS)]
    failures: list[str] = []
    start = threading.Barrier(READERS + 1)
    swapped = threading.Event()
    swaps = [0]

    def read(reader: int) -> None:
        start.wait()
        last_epoch = 0
        try:
            while progress[reader] < ROUTES_PER_READER:
                while progress[reader] >= ROUTES_PER_READER * (swaps[0] + 1) // SWAPS and not swapped.is_set():
                    threading.Event().wait(0.0002)
                router = cell[0]
                epoch = router.epoch
                if epoch < last_epoch:
                    failures.append(f"reader {reader}: epoch {epoch} after {last_epoch}")
                last_epoch = epoch
                # Half the readers route numbers as arrays, half texts as lists.
                if reader % 2:
                    got: list[Any] = router.route_many(NUMBERS).tolist()
                    want = expected[epoch][0]
                else:
                    got = router.node_many(TEXTS)
                    want = expected[epoch][1]
                if got != want or router.epoch != epoch:
                    failures.append(f"reader {reader}: a torn answer at epoch {epoch}")
                seen[reader].add(epoch)
                progress[reader] += BATCH
        except BaseException as err:  # noqa: BLE001 - reported below, in the main thread
            failures.append(f"reader {reader}: {err!r}")
            progress[reader] = ROUTES_PER_READER

    def write() -> None:
        start.wait()
        for swap, document in enumerate(documents[1:], start=1):
            # Swap number i once every reader has done i/(SWAPS+1) of its routes.
            while min(progress) < ROUTES_PER_READER * swap // (SWAPS + 1) and not failures:
                threading.Event().wait(0.0005)
            cell[0] = cell[0].replace(document)
            swaps[0] = swap
        swapped.set()

    threads = [threading.Thread(target=read, args=(reader,)) for reader in range(READERS)]
    threads.append(threading.Thread(target=write))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a thread is stuck (deadlock?)"

    assert failures == []
    assert cell[0].epoch == SWAPS + 1
    assert sum(progress) >= READERS * ROUTES_PER_READER
    every_epoch = set().union(*seen)
    # Each reader met many of the epochs, and together they met nearly all: the swaps
    # happened while they routed.
    assert all(len(epochs) >= SWAPS // 2 for epochs in seen), [len(epochs) for epochs in seen]
    assert len(every_epoch) >= SWAPS * 3 // 4, len(every_epoch)


def test_threads_replacing_one_router_at_once_each_get_their_own() -> None:
    """`replace` called on one router from many threads at once: each gets a router of
    its own document, and the shared one is unchanged."""
    threads = 8
    base = Router(topology(1))
    before = base.route_many(NUMBERS).tolist()
    results: dict[int, list[int]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def replace(index: int) -> None:
        start.wait()
        try:
            for _ in range(50):
                replaced = base.replace(topology(2 + index))
                results[index] = replaced.route_many(NUMBERS).tolist()
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    workers = [threading.Thread(target=replace, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert errors == []
    assert base.route_many(NUMBERS).tolist() == before
    for index in range(threads):
        assert results[index] == Router(topology(2 + index)).route_many(NUMBERS).tolist()
