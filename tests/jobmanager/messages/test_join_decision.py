"""A join decided at run time travels in the decision event; logs written before it read."""

import msgpack

from jobmanager.core.executiongraph import PartitionRangesInputInfo, WholeInputInfo
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from shuffle.ranges import IndexRange

JOIN = ev.JoinDecision(
    "j1",
    "broadcast",
    "right",
    64 << 20,
    2 << 20,
    10 << 20,
    "join 'j1' (left outer): broadcast join ...",
    "left",
)


def test_a_decision_with_its_join_and_whole_reads_round_trips():
    event = ev.VertexParallelismDecided(
        "join",
        4,
        (
            ("left->join", PartitionRangesInputInfo(128, (0, 4, 8, 12, 16))),
            ("right->join", WholeInputInfo(2, 128, 4)),
        ),
        ev.Explanation("why", 64 << 20, 2 << 20),
        (JOIN,),
    )
    assert decode(encode(event)) == event


def test_the_whole_reads_name_all_subpartitions():
    assert WholeInputInfo(3, 8, 2)[1].slices[0].partitions == IndexRange(0, 2)
    assert WholeInputInfo(3, 8, 2)[1].slices[0].subpartitions == IndexRange(0, 7)
    ranges = PartitionRangesInputInfo(8, (0, 2, 5))
    assert len(ranges) == 2 and ranges[1].slices[0].partitions == IndexRange(2, 4)
    assert ranges[1].slices[0].subpartitions == IndexRange(0, 7)


def test_a_decision_written_before_joins_were_decided_reads_without_them():
    explanation = ev.Explanation("why")
    named = msgpack.ExtType(
        2,
        encode(
            (
                "VertexParallelismDecided",
                {"vertex": "agg", "parallelism": 2, "input_infos": (), "explanation": explanation},
            )
        ),
    )
    positional = msgpack.ExtType(1, encode(("VertexParallelismDecided", "agg", 2, (), explanation)))
    for old in (named, positional):
        decoded = decode(msgpack.packb(old))
        assert decoded == ev.VertexParallelismDecided("agg", 2, (), explanation)
        assert decoded.joins == ()
