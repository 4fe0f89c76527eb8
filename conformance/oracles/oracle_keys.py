"""The keys of the Python oracle tests, what each stands for as bytes, and the
comparison of shardroute's answers with an oracle's, key for key.

`byte_keys() + text_keys() + integer_keys()` (>= 10,000 keys) cover every edge a
byte-hashing rule has: the empty key, every single byte, every tail length, bytes
0x80-0xFF, long keys, unicode text, integers at the 32/53/64-bit edges. `crc_keys()`
(the couchbase and vshard tests) covers every edge of a byte-wise CRC: every single
byte, bytes 0x80-0xFF in every position, long keys, text in several scripts, typical
document ids, integers."""

from __future__ import annotations

import random
from collections.abc import Sequence

Key = bytes | str | int

UNICODE = [
    "",
    "a",
    "ключ",
    "🔑",
    "😀😀",
    "日本語のキー",
    "e\u0301",
    "\u00e9",
    "\uffff",
    "\U0010ffff",
    "\u0000",
    "tab\tnew\nline",
    "{user1000}.following",
    "mixed-ascii-ключ-🔑-日本",
]

INTEGERS = [0, 1, 9, 10, 42, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 - 1, 2**53, 2**53 + 1, 2**63, 2**64 - 1]

LONG_LENGTHS = (255, 256, 257, 1000, 1023, 4096, 65537)


def byte_keys(
    seed: int = 5, per_length: int = 100, long_lengths: Sequence[int] = LONG_LENGTHS, extra: int = 0
) -> list[bytes]:
    """The empty key, every single byte, 0x00/0x7f/0x80/0xff followed by every byte,
    `per_length` random keys of every length from 3 to 64, a random, an all-0xff and an
    all-"x" key of each of `long_lengths`, and `extra` random keys of 1 to 250 bytes
    (memcached's limit)."""
    rng = random.Random(seed)
    keys: list[bytes] = [b""]
    keys += [bytes([b]) for b in range(256)]
    keys += [bytes([a, b]) for a in (0x00, 0x7F, 0x80, 0xFF) for b in range(256)]
    for length in range(3, 65):
        for _ in range(per_length):
            keys.append(bytes(rng.randrange(256) for _ in range(length)))
    for length in long_lengths:
        keys += [bytes(rng.randrange(256) for _ in range(length)), b"\xff" * length, b"x" * length]
    keys += [rng.randbytes(rng.randrange(1, 251)) for _ in range(extra)]
    return keys


def text_keys(seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    keys = list(UNICODE)
    keys += [f"user:{i}" for i in range(2000)]
    alphabet = "abcXYZ019 -_:{}/ключ🔑日本é\u0000\uffff\U0001f600"
    for length in range(1, 41):
        for _ in range(25):
            keys.append("".join(rng.choice(alphabet) for _ in range(length)))
    keys += ["k" * 300, "ключ" * 200, "🔑" * 500, "é" * 129, "a" * 256, "a" * 257]
    return keys


def integer_keys(seed: int = 11) -> list[int]:
    rng = random.Random(seed)
    keys = list(INTEGERS)
    keys += list(range(1000))
    keys += [rng.randrange(2**64) for _ in range(500)]
    return keys


def all_keys() -> list[Key]:
    return [*byte_keys(), *text_keys(), *integer_keys()]


def crc_keys() -> list[Key]:
    rng = random.Random(20240605)
    keys: list[Key] = [b""]
    keys += [bytes([b]) for b in range(256)]
    keys += [bytes([a, b]) for a in (0x00, 0x7F, 0x80, 0xFF) for b in range(256)]
    keys += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(3000)]
    keys += [bytes(rng.randrange(0x80, 0x100) for _ in range(n)) for n in (1, 3, 8, 17, 255, 256, 1024)]
    keys += [b"\x00" * n for n in (1, 2, 16, 250)] + [b"\xff" * n for n in (1, 2, 16, 250)]
    keys += [bytes(range(256)) * 4, b"x" * 65535, b"y" * 250_000]

    rng = random.Random(7)
    keys += [f"airline_{i}" for i in range(2500)]
    keys += [f"user::{i:08d}" for i in range(1000)]
    keys += ["", " ", "hello", "k0", "k1", "123456789", "{tag}key", "key{}"]
    keys += ["ключ", "键", "🔑", "é", "e\u0301", "\u0000"]
    alphabet = "abcXYZ019_:-/ ключ键🔑€\u00e9\u0301"
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(2000)]
    keys += ["長" * 1000, "🔑" * 500]

    keys += [0, 1, 9, 10, 42, 99, 100, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 - 1, 2**53, 2**53 + 1]
    keys += [10**k for k in range(20)] + [10**k - 1 for k in range(1, 20)] + [2**64 - 1, 2**63, 2**63 - 1]
    keys += list(range(1000, 2000))
    return keys


def key_bytes(key: Key) -> bytes:
    """The bytes a key stands for where a system hashes bytes (Kafka's key serializer,
    Redis and memcached clients, Couchbase, vshard): bytes as they are, text as UTF-8,
    an integer as its decimal ASCII text."""
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    return str(key).encode("ascii")


def short(key: object) -> object:
    """A key as a failure message shows it: a long one by its length only."""
    if isinstance(key, (bytes, str, int)) and len(key_bytes(key)) >= 80:
        return f"<{len(key_bytes(key))} bytes>"
    return key


def assert_agree(keys: Sequence[object], expected: Sequence[object], got: Sequence[object]) -> None:
    """Fails unless shardroute's answers `got` are the oracle's `expected`, key for key,
    naming how many keys differ and the first five."""
    assert len(expected) == len(got) == len(keys), f"{len(keys)} keys, {len(expected)} expected, {len(got)} got"
    differences = [(short(key), want, have) for key, want, have in zip(keys, expected, got) if want != have]
    assert not differences, f"{len(differences)} of {len(keys)} keys differ, first: {differences[:5]}"
