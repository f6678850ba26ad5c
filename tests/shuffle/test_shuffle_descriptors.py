"""ShuffleDescriptors are small values that round-trip through plain lists and msgpack."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shuffle import PartitionId, ShuffleDescriptor

descriptors = st.builds(
    ShuffleDescriptor,
    st.builds(PartitionId, st.text(), st.integers(0, 2**31)),
    st.text(),
    st.text(),
    st.text(),
    st.integers(1, 2**31),
)


@given(descriptors)
def test_round_trips_through_a_plain_list_and_msgpack(descriptor):
    packed = msgpack.packb(descriptor.to_list())
    assert ShuffleDescriptor.from_list(msgpack.unpackb(packed)) == descriptor


def test_is_a_frozen_slotted_value():
    descriptor = ShuffleDescriptor(PartitionId("a->b", 1), "tm-1", "node-1", "/d/1.tpf", 8)
    assert not hasattr(descriptor, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        descriptor.path = "/elsewhere"
    assert descriptor.to_list() == ["a->b", 1, "tm-1", "node-1", "/d/1.tpf", 8, 0, 0]
    assert descriptor.is_local_to("node-1") and not descriptor.is_local_to("node-2")


def test_malformed_lists_are_refused_by_what_is_wrong():
    with pytest.raises(ValueError, match="8 fields, got 2"):
        ShuffleDescriptor.from_list(["a", 1])
    with pytest.raises(ValueError, match="must be ints"):
        ShuffleDescriptor.from_list(["a", "1", "tm", "node", "/p", 2, 0, 0])
    with pytest.raises(ValueError, match="at least one subpartition"):
        ShuffleDescriptor(PartitionId("a", 0), "tm", "node", "/p", 0)
