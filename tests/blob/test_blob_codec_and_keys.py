"""The msgpack + LZ4 codec, and content-hash keys."""

from __future__ import annotations

import hashlib

import lz4.frame
import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from blob import BlobKey, DecodeError, decode, encode

msgpack_ints = st.integers(-(2**63), 2**64 - 1)
values = st.recursive(
    st.none() | st.booleans() | msgpack_ints | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda children: st.lists(children) | st.dictionaries(st.text() | msgpack_ints, children),
    max_leaves=30,
)


@given(values)
def test_decode_inverts_encode(value):
    assert decode(encode(value)) == value


def test_encoding_is_msgpack_then_an_lz4_frame():
    value = {
        "descriptors": [["a->b", i, "tm-1", "node-1", f"/d/{i}.tpf", 1000] for i in range(500)]
    }
    encoded = encode(value)
    packed = msgpack.packb(value, use_bin_type=True)
    assert lz4.frame.decompress(encoded) == packed
    assert len(encoded) < len(packed) / 4  # repetitive descriptors compress well


def test_tuples_come_back_as_lists():
    assert decode(encode(("a", (1, 2)))) == ["a", [1, 2]]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"not a frame", "not an LZ4 frame"),
        (lz4.frame.compress(b"\x01\x02"), "not one msgpack value"),
    ],
)
def test_undecodable_bytes_raise_decode_error(data, message):
    with pytest.raises(DecodeError, match=message):
        decode(data)


def test_a_key_is_the_sha256_of_the_content():
    key = BlobKey.of(b"hello")
    assert key.digest == hashlib.sha256(b"hello").hexdigest() == str(key)
    assert key.matches(b"hello") and not key.matches(b"hellO")


@pytest.mark.parametrize("digest", ["abc", "G" * 64, "A" * 64, ""])
def test_a_key_must_look_like_a_sha256(digest):
    with pytest.raises(ValueError, match="64 lowercase hex digits"):
        BlobKey(digest)
