"""What marks an edge as one side of a join the JobManager may decide at run time, and what
the planner decided of each join a planned vertex runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from jobmanager.errors import InvalidEdgeError

__all__ = ["JoinInput", "PlannedJoin"]


@dataclass(frozen=True, slots=True)
class JoinInput:
    """This edge is one side of a shuffled equi-join that the JobManager may turn into a
    broadcast join once its inputs' real bytes are known (FLIP-470): ``join`` names the join
    (unique in the job), ``kind`` is its kind (inner, left, right, full, semi, anti) and
    ``side`` which side this edge is (left or right). ``redistributable``: nothing after the
    join in the consumer's task relies on the rows being hash-partitioned, so when the other
    side is broadcast this side may be read in any slices (whole producer outputs, as Spark's
    local shuffle reader reads them) instead of by subpartition."""

    join: str
    kind: str
    side: str
    redistributable: bool = False

    KINDS: ClassVar[tuple[str, ...]] = ("inner", "left", "right", "full", "semi", "anti")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise InvalidEdgeError(
                f"join {self.join!r}: kind {self.kind!r} is not one of {', '.join(self.KINDS)}"
            )
        if self.side not in ("left", "right"):
            raise InvalidEdgeError(f"join {self.join!r}: side {self.side!r} is not left or right")

    @property
    def may_be_broadcast(self) -> bool:
        """Whether the join's kind allows this side to be sent whole to every task: the
        side whose unmatched rows the join does not keep (inner: either; left outer, semi,
        anti: the right; right outer: the left; full outer: neither)."""
        if self.side == "left":
            return self.kind in ("inner", "right")
        return self.kind in ("inner", "left", "semi", "anti")


@dataclass(frozen=True, slots=True)
class PlannedJoin:
    """A join a planned vertex runs, as the planner cut it from the listing, for ``tidal
    explain``: nothing runs by it. ``strategy``: ``broadcast`` (``side`` sent whole to every
    task), ``shuffled`` (both sides hashed on the keys or already so; ``side`` the one Spark
    builds on) or ``runtime`` (shuffled and marked with ``JoinInput``: the JobManager decides
    it from the bytes written). ``left`` and ``right``: the view each side is read from (the
    vertex's ``in<i>``: its i-th input edge), "" for a side computed in the vertex's own task.
    ``left_listed``/``right_listed``: each side's bytes as the listing estimated them, which
    the planner held against ``table.optimizer.join.broadcast-threshold``. ``hints``: for a
    join decided at run time, the in-task hint its SQL gives for building on the left side and
    for building on the right (``BROADCAST(t1)``, ``BROADCAST(t2)``; ``SHUFFLE_HASH`` for a
    full outer join), so a task can build on the side the JobManager found smaller
    (``SqlOperator.built_on``); empty where the SQL has no such hint."""

    join: str
    kind: str
    strategy: str
    side: str
    left: str
    right: str
    left_listed: int
    right_listed: int
    hints: tuple[str, ...] = ()

    BROADCAST, SHUFFLED, RUNTIME = "broadcast", "shuffled", "runtime"

    def __setstate__(self, state) -> None:
        """Unpickle, also a join pickled before ``hints`` existed."""
        names = (
            "join",
            "kind",
            "strategy",
            "side",
            "left",
            "right",
            "left_listed",
            "right_listed",
            "hints",
        )
        for name, value in zip(names, (*state, *((),)[: len(names) - len(state)])):
            object.__setattr__(self, name, value)

    def view(self, side: str) -> str:
        return self.left if side == "left" else self.right

    def listed(self, side: str) -> int:
        return self.left_listed if side == "left" else self.right_listed
