"""The codec for what Tidal ships as blobs and events: msgpack, then LZ4 frame compression.

msgpack keeps the encoding compact and language-neutral (no pickle: a blob is data, never code);
LZ4 is fast enough to sit on the deployment path and removes most of the repetition in lists of
similar records, such as the ShuffleDescriptors of one partition group (Flink reports 72%).
msgpack has no tuple: tuples come back as lists. Map keys may be any msgpack scalar.
"""

from __future__ import annotations

from typing import Any

import lz4.frame
import msgpack

from jobmanager.errors import TidalError

__all__ = ["DecodeError", "decode", "encode"]


class DecodeError(TidalError, ValueError):
    """The bytes are not an LZ4 frame holding one msgpack value."""


def encode(value: Any) -> bytes:
    return lz4.frame.compress(msgpack.packb(value, use_bin_type=True))


def decode(data: bytes | bytearray | memoryview) -> Any:
    try:
        packed = lz4.frame.decompress(data)
    except RuntimeError as error:
        raise DecodeError(f"{len(data)} bytes are not an LZ4 frame: {error}") from error
    try:
        return msgpack.unpackb(packed, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as error:
        raise DecodeError(
            f"{len(packed)} decompressed bytes are not one msgpack value: {error}"
        ) from error
