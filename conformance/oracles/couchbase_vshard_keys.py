"""Keys for the couchbase and vshard oracle tests: >= 10,000 per test, with every edge
of a byte-wise CRC: the empty key, every single byte 0x00-0xFF, bytes 0x80-0xFF in
every position, long keys, UTF-8 text in several scripts, typical document ids, and
integers (routed as their decimal ASCII string by both profiles)."""

from __future__ import annotations

import random


def byte_keys() -> list[bytes]:
    rng = random.Random(20240605)
    keys: list[bytes] = [b""]
    keys += [bytes([b]) for b in range(256)]
    keys += [bytes([a, b]) for a in (0x00, 0x7F, 0x80, 0xFF) for b in range(256)]
    keys += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(3000)]
    keys += [bytes(rng.randrange(0x80, 0x100) for _ in range(n)) for n in (1, 3, 8, 17, 255, 256, 1024)]
    keys += [b"\x00" * n for n in (1, 2, 16, 250)] + [b"\xff" * n for n in (1, 2, 16, 250)]
    keys += [bytes(range(256)) * 4, b"x" * 65535, b"y" * 250_000]
    return keys


def text_keys() -> list[str]:
    rng = random.Random(7)
    keys = [f"airline_{i}" for i in range(2500)]
    keys += [f"user::{i:08d}" for i in range(1000)]
    keys += ["", " ", "hello", "k0", "k1", "123456789", "{tag}key", "key{}", "ключ", "键", "🔑", "é", "e\u0301", "\u0000"]
    alphabet = "abcXYZ019_:-/ ключ键🔑€\u00e9\u0301"
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(2000)]
    keys += ["長" * 1000, "🔑" * 500]
    return keys


def integer_keys() -> list[int]:
    values = [0, 1, 9, 10, 42, 99, 100, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 - 1, 2**53, 2**53 + 1]
    values += [10**k for k in range(20)] + [10**k - 1 for k in range(1, 20)] + [2**64 - 1, 2**63, 2**63 - 1]
    values += list(range(1000, 2000))
    return values


def key_bytes(key: bytes | str | int) -> bytes:
    """The documented meaning of a key: bytes as they are, text as UTF-8, integers as decimal ASCII."""
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    return str(key).encode("ascii")


def all_keys() -> list[bytes | str | int]:
    keys: list[bytes | str | int] = []
    keys += byte_keys()
    keys += text_keys()
    keys += integer_keys()
    return keys
