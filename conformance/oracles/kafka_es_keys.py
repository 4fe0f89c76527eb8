"""Key sets shared by the Python oracle tests: >= 10,000 keys covering every edge a
byte-hashing rule has (empty key, every single byte, every tail length, bytes 0x80-0xFF,
long keys, unicode text, integers at the 32/53/64-bit edges)."""

from __future__ import annotations

import random

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


def byte_keys(seed: int = 5) -> list[bytes]:
    rng = random.Random(seed)
    keys: list[bytes] = [b""]
    keys += [bytes([b]) for b in range(256)]
    keys += [bytes([a, b]) for a in (0x00, 0x7F, 0x80, 0xFF) for b in range(256)]
    for length in range(3, 65):
        for _ in range(100):
            keys.append(bytes(rng.randrange(256) for _ in range(length)))
    for length in (255, 256, 257, 1000, 1023, 4096, 65537):
        keys.append(bytes(rng.randrange(256) for _ in range(length)))
        keys.append(b"\xff" * length)
        keys.append(b"x" * length)
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
