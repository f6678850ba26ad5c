"""What the JobManager decided about a join at run time, as a message the event log keeps.

A join whose two inputs are shuffled on its keys is decided once all their producers finished,
from the bytes they really wrote (FLIP-470's adaptive broadcast join): a side the join's kind
allows to be broadcast that wrote at most the broadcast threshold is sent whole to every
task; otherwise the join stays shuffled and builds its hash table on the smaller side. The
decision rides in ``VertexParallelismDecided.joins``, so a replay applies it and never decides
again, and ``explain`` can say why.
"""

from __future__ import annotations

from jobmanager.messages.codec import message

__all__ = ["JoinDecision"]


@message
class JoinDecision:
    """``strategy``: "broadcast" (``side`` is the side sent whole to every task) or
    "shuffled" (``side`` is the build side, the smaller one). ``threshold``: the broadcast
    threshold in bytes, -1 when broadcasting is off. ``text``: the same in words.
    ``decided_after``: the producers whose finishing the decision waited for. ``other_read``:
    how a broadcast join's other side reached its tasks: ``SUBPARTITIONS`` (by hash
    subpartition ranges, as shuffled), ``LOCAL`` (whole outputs of consecutive producers, no
    task waiting for every producer's slice) or ``CHAINED`` (the join ran in that side's
    producer's tasks, so that side was never written); empty for a shuffled join. A byte
    count of -1: that side was not produced yet when the join was decided (``CHAINED``)."""

    join: str
    strategy: str
    side: str
    left_bytes: int
    right_bytes: int
    threshold: int
    text: str
    kind: str = ""
    decided_after: tuple[str, ...] = ()
    other_read: str = ""

    BROADCAST = "broadcast"
    SHUFFLED = "shuffled"
    SUBPARTITIONS, LOCAL, CHAINED = "subpartitions", "local", "chained"

    @property
    def is_broadcast(self) -> bool:
        return self.strategy == JoinDecision.BROADCAST
