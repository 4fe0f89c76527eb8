"""Oracle test of the `vshard` profile.

Every key of oracle_keys.crc_keys (>= 10,000: empty, every byte, 0x80-0xFF, long,
unicode, integers) is routed by shardroute and compared, for several bucket counts
(3000 is vshard's default), with two oracles:

- the real Tarantool (Debian package `tarantool`, 2.6.0 on Debian 12): its
  `digest.crc32` inside vshard's own rule `digest.crc32(tostring(key)) % bucket_count + 1`
  (vshard_bucket_id.lua; vshard is not packaged, and that line is the whole of
  `bucket_id_strcrc32`). Integer keys below 10^14 are passed to Tarantool as Lua numbers,
  checking that `tostring` writes them as the decimal string shardroute hashes;
- the PyPI `crc32c` package (an independent CRC-32C): `(crc32c(key) ^ 0xFFFFFFFF) %
  bucket_count + 1`, i.e. Tarantool's CRC-32C register has no final xor.

A missing oracle fails the test with the command that installs it; nothing is skipped.

Run: .venv/bin/python -m pytest conformance/oracles/test_vshard.py
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import crc32c  # type: ignore[import-untyped]
import pytest

import shardroute
from oracle_keys import assert_agree, crc_keys, key_bytes, short
from shardroute_testing import doc

HERE = pathlib.Path(__file__).resolve().parent
COUNTS = [1, 7, 3000, 16384, 30000]


def tarantool(lines: list[str]) -> list[int]:
    """vshard_bucket_id.lua run by the real Tarantool over "<count> <kind> <hex>" lines."""
    binary = shutil.which("tarantool")
    if binary is None:
        pytest.fail("the tarantool oracle is not installed: run `apt-get install tarantool` (Debian package)")
    done = subprocess.run(
        [binary, str(HERE / "vshard_bucket_id.lua")],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"tarantool failed: {done.stderr}"
    return [int(line) for line in done.stdout.split()]


def tarantool_buckets(keys: list[bytes | str | int], count: int) -> list[int]:
    lines = []
    for key in keys:
        numeric = isinstance(key, int) and key < 10**14
        lines.append(f"{count} {'n' if numeric else 's'} {key_bytes(key).hex()}")
    return tarantool(lines)


def router(count: int, nodes: int = 3) -> shardroute.Router:
    return shardroute.Router(doc(nodes, {"type": "vshard", "bucket_count": count}))


@pytest.mark.parametrize("count", COUNTS)
def test_every_key_matches_tarantool(count: int) -> None:
    keys = crc_keys()
    assert len(keys) >= 10_000
    expected = tarantool_buckets(keys, count)
    assert len(expected) == len(keys)
    assert_agree(keys, expected, router(count, nodes=min(3, count)).route_many(keys))


@pytest.mark.parametrize("count", COUNTS)
def test_every_key_matches_crc32c_package(count: int) -> None:
    keys = crc_keys()
    r = router(count, nodes=min(3, count))
    nodes = min(3, count)
    base, extra = divmod(count, nodes)
    firsts = [1 + i * base + min(i, extra) for i in range(nodes)]
    differences = []
    for key in keys:
        bucket = (crc32c.crc32c(key_bytes(key)) ^ 0xFFFFFFFF) % count + 1
        owner = max(i for i, first in enumerate(firsts) if first <= bucket)
        got = (r.route(key), r.node(key))
        if got != (bucket, f"n{owner}"):
            differences.append((short(key), got, bucket))
    assert differences == [], f"{len(differences)} of {len(keys)} keys differ, first: {differences[:5]}"


def test_tarantool_check_values() -> None:
    # digest.crc32("123456789") == 486108540 == ~0xE3069283 (the CRC-32C check value).
    assert tarantool_buckets(["123456789"], 2**31) == [486108540 % 2**31 + 1]
    assert router(3000).route("123456789") == 486108540 % 3000 + 1
    # The empty key keeps the init register 0xFFFFFFFF.
    assert tarantool_buckets([""], 3000) == [0xFFFFFFFF % 3000 + 1] == [router(3000).route("")]


def test_documented_difference_for_large_lua_numbers() -> None:
    # vshard hashes tostring(key): a Lua number >= 10^14 prints in %.14g notation, so a
    # program passing such an id as a number hashes "1.2345678901235e+14", not the digits.
    number = 123456789012345
    as_number, as_string = tarantool([f"3000 n {str(number).encode().hex()}", f"3000 s {b'1.2345678901235e+14'.hex()}"])
    assert as_number == as_string == router(3000).route("1.2345678901235e+14")


def test_non_default_hashing_is_refused() -> None:
    with pytest.raises(shardroute.InvalidTopologyError, match="^hashing"):
        shardroute.Router(doc(1, "vshard", hashing={"function": "crc32"}))
