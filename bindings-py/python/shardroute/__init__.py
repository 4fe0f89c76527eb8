# The public package: re-exports the compiled module `shardroute._native` (whose
# docstrings, written once on the Rust side, are the documentation). Types: __init__.pyi.
import typing as _typing

from shardroute._native import (
    InvalidArgumentError,
    InvalidKeyError,
    InvalidTopologyError,
    LimitExceededError,
    NoNodesError,
    Router,
    ShardrouteError,
    __doc__,
    __version__,
    hash_key,
    jump,
)

#: What a router routes: text (hashed as UTF-8), bytes, or an int in 0..2**64.
Key = _typing.Union[str, bytes, bytearray, memoryview, int]

__all__ = [
    "InvalidArgumentError",
    "InvalidKeyError",
    "InvalidTopologyError",
    "Key",
    "LimitExceededError",
    "NoNodesError",
    "Router",
    "ShardrouteError",
    "__version__",
    "hash_key",
    "jump",
]
