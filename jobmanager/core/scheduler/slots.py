"""The slot pool: a whole bulk of slots or none, handed out in the order asked for.

A pipelined region needs all its slots at once (it cannot run half-deployed), so a request is
fulfilled whole or waits. Requests are served strictly in order, so a large region is never
starved by a stream of small ones; the strategies submit them in topological order.

Subtasks of different job vertices in one region share slots, as in Flink's default slot
sharing group: a region needs as many slots as its widest job vertex has subtasks in it, and a
job whose regions are single subtasks runs with one slot.

With ``prefetch`` above 0, a single-subtask request that finds no free slot, while no
TaskManager is on its way, may be placed in a slot whose one task is still running, to wait
there (a TaskManager runs its queued tasks in the order they arrive, on whichever of its slots
frees first): the next tasks are already on the TaskManager when the running one ends, so a
thousand short tasks do not each wait for a round trip to the JobManager, and one call carries
several. At most ``prefetch`` tasks wait per slot, dealt round robin; shared slots take none.
A waiting task cannot move to a slot that frees on another TaskManager, so the depth bounds
how unevenly long tasks can spread.
"""

from __future__ import annotations

from collections import deque
from itertools import islice
from typing import Callable, Sequence

from jobmanager.core.executiongraph import ExecutionVertex
from jobmanager.errors import NoResourceAvailableError

__all__ = ["Slot", "SlotPool", "SlotRequest", "first_task_manager_slots", "slots_needed"]

_PREFERENCE_SCAN = 64  # free slots looked at for one on a preferred TaskManager


class Slot:
    __slots__ = ("task_manager", "index", "users", "alive", "shared")

    def __init__(self, task_manager: str, index: int) -> None:
        self.task_manager = task_manager
        self.index = index
        self.users = 0
        self.alive = True
        self.shared = False

    def __repr__(self) -> str:
        return f"Slot({self.task_manager}#{self.index}, {self.users} users)"


class SlotRequest:
    __slots__ = ("vertices", "size", "cancelled")

    def __init__(self, vertices: Sequence[ExecutionVertex], size: int) -> None:
        self.vertices = vertices
        self.size = size
        self.cancelled = False


def slots_needed(vertices: Sequence[ExecutionVertex]) -> int:
    """With slot sharing, one slot per subtask of the widest job vertex in the bulk."""
    if len(vertices) == 1:
        return 1
    per_job_vertex: dict[str, int] = {}
    for v in vertices:
        per_job_vertex[v.name] = per_job_vertex.get(v.name, 0) + 1
    return max(per_job_vertex.values())


def first_task_manager_slots(slots_per_task_manager: int, max_slots: int | None) -> int:
    """The slots of the TaskManager every job asks for first (``SlotPool.task_managers_ahead``,
    and the shell's early lease): a whole one, within the job's limit; 0 for none."""
    if max_slots is None:
        return slots_per_task_manager
    return min(slots_per_task_manager, max_slots)


class SlotPool:
    """Free slots of registered TaskManagers, pending requests, and slots asked for but not
    yet registered. ``max_slots`` None means the cluster may grow without bound."""

    def __init__(
        self, slots_per_task_manager: int, max_slots: int | None, prefetch: int = 0
    ) -> None:
        self.slots_per_task_manager = slots_per_task_manager
        self.max_slots = max_slots
        self.prefetch = prefetch
        self.free: deque[Slot] = deque()
        self.takes_followers: dict[int, Slot] = {}  # unshared, with room for one more waiting
        self.task_managers: dict[str, list[Slot]] = {}
        self.pending: deque[SlotRequest] = deque()
        self.demand = 0
        self.requested_slots = 0

    def _take_free(self, node: str | None, node_of: Callable[[str], str]) -> Slot:
        """A free slot on ``node`` among the first few free ones, else the first: the look
        stays O(1) however many slots are free."""
        if node is not None:
            for position, slot in enumerate(islice(self.free, _PREFERENCE_SCAN)):
                if node_of(slot.task_manager) == node:
                    del self.free[position]
                    return slot
        return self.free.popleft()

    def take_free(
        self, allowed: Callable[[Slot], bool], preferred: Callable[[Slot], bool]
    ) -> Slot | None:
        """A free slot that ``allowed`` accepts, one ``preferred`` likes if there is one, among
        the first few free ones (a speculative attempt's slot); None if none is."""
        fallback = None
        for position, slot in enumerate(islice(self.free, _PREFERENCE_SCAN)):
            if not allowed(slot):
                continue
            if preferred(slot):
                del self.free[position]
                return slot
            if fallback is None:
                fallback = position
        if fallback is None:
            return None
        slot = self.free[fallback]
        del self.free[fallback]
        return slot

    @property
    def total_slots(self) -> int:
        return sum(len(slots) for slots in self.task_managers.values())

    def submit(self, vertices: Sequence[ExecutionVertex]) -> SlotRequest:
        size = slots_needed(vertices)
        if self.max_slots is not None and size > self.max_slots:
            raise NoResourceAvailableError(
                f"a region of {len(vertices)} subtasks starting with {vertices[0].label} needs "
                f"{size} slots at once, but the cluster may have at most {self.max_slots} "
                "(slotmanager.number-of-slots.max)"
            )
        request = SlotRequest(vertices, size)
        self.pending.append(request)
        self.demand += size
        return request

    def cancel(self, request: SlotRequest) -> None:
        if not request.cancelled:
            request.cancelled = True
            self.demand -= request.size

    def fulfil(
        self,
        preferred: Callable[[SlotRequest], str | None] | None = None,
        node_of: Callable[[str], str] = lambda task_manager: "",
    ) -> list[tuple[SlotRequest, list[Slot]]]:
        """Hand out slots to pending requests, in order, while the head fits. ``preferred``
        names the node a single-slot request would rather run on (where its input is): a free
        slot there (``node_of`` its TaskManager) is taken if one is near the front."""
        granted = []
        promised: dict[int, int] = {}  # tasks given a slot in this call, not yet acquired
        while self.pending:
            head = self.pending[0]
            if head.cancelled:
                self.pending.popleft()
                continue
            if head.size <= len(self.free):
                slots = self._free_slots(head, preferred, node_of, promised)
            elif self._may_follow(head):
                slots = [self._follow(promised)]
            else:
                break
            self.pending.popleft()
            self.demand -= head.size
            granted.append((head, slots))
        return granted

    def _free_slots(self, head: SlotRequest, preferred, node_of, promised: dict) -> list[Slot]:
        """Free slots for ``head`` (a single one on its preferred node if near the front); a
        single task's slot may take followers with prefetch."""
        if head.size == 1 and preferred is not None:
            slots = [self._take_free(preferred(head), node_of)]
        else:
            slots = [self.free.popleft() for _ in range(head.size)]
        if len(head.vertices) == 1 and self.prefetch:
            promised[id(slots[0])] = 1
            self.takes_followers[id(slots[0])] = slots[0]
        return slots

    def _may_follow(self, head: SlotRequest) -> bool:
        """Whether ``head`` may wait in a busy slot (prefetch) rather than for a free one."""
        return (
            bool(self.prefetch)
            and head.size == 1
            and bool(self.takes_followers)
            and not self.requested_slots
        )

    def _follow(self, promised: dict) -> Slot:
        """The next busy slot taking followers, round robin, while under the prefetch."""
        key = next(iter(self.takes_followers))
        slot = self.takes_followers.pop(key)
        promised[key] = promised.get(key, 0) + 1
        if slot.users + promised[key] <= self.prefetch:
            self.takes_followers[key] = slot  # round robin: back of the line
        return slot

    def slots_to_request(self) -> int:
        """Slots the pending requests need beyond the free ones and those on their way, in
        whole TaskManagers, within ``max_slots``."""
        missing = self.demand - len(self.free) - self.requested_slots
        if missing <= 0:
            return 0
        wanted = -(-missing // self.slots_per_task_manager) * self.slots_per_task_manager
        if self.max_slots is not None:
            wanted = min(wanted, self.max_slots - self.total_slots - self.requested_slots)
        return max(wanted, 0)

    def task_managers_to_request(self) -> list[int]:
        """The sizes (in slots) of the TaskManagers the pending requests still need (see
        ``slots_to_request``); the last one may be smaller so the cluster never passes the
        limit."""
        wanted = self.slots_to_request()
        sizes = [self.slots_per_task_manager] * (wanted // self.slots_per_task_manager)
        if wanted % self.slots_per_task_manager:
            sizes.append(wanted % self.slots_per_task_manager)
        self.requested_slots += sum(sizes)
        return sizes

    def task_managers_ahead(self) -> list[int]:
        """The first TaskManager, asked for before any slot is: every job needs one, whatever
        its sources turn out to need. None while one is registered or on its way, or slots are
        already asked for."""
        if self.task_managers or self.requested_slots or self.demand:
            return []
        size = first_task_manager_slots(self.slots_per_task_manager, self.max_slots)
        if size <= 0:
            return []
        self.requested_slots += size
        return [size]

    def register(self, task_manager: str, slots: int) -> None:
        if task_manager in self.task_managers:
            return
        self.requested_slots = max(0, self.requested_slots - slots)
        new = [Slot(task_manager, i) for i in range(slots)]
        self.task_managers[task_manager] = new
        self.free.extend(new)

    def request_failed(self, slots: int) -> None:
        self.requested_slots = max(0, self.requested_slots - slots)

    def remove(self, task_manager: str) -> list[Slot]:
        slots = self.task_managers.pop(task_manager, [])
        for slot in slots:
            slot.alive = False
            self.takes_followers.pop(id(slot), None)
        self.free = deque(s for s in self.free if s.alive)
        return slots

    def acquire(self, slot: Slot, shared: bool = False) -> None:
        slot.users += 1
        slot.shared = shared or (slot.shared and slot.users > 1)
        if slot.users <= self.prefetch and not slot.shared:
            self.takes_followers[id(slot)] = slot
        else:
            self.takes_followers.pop(id(slot), None)

    def release(self, slot: Slot) -> None:
        slot.users -= 1
        if slot.users == 0:
            slot.shared = False
            self.takes_followers.pop(id(slot), None)
            if slot.alive:
                self.free.append(slot)
        elif slot.users <= self.prefetch and not slot.shared and slot.alive:
            self.takes_followers[id(slot)] = slot

    def slot(self, task_manager: str, index: int) -> Slot:
        return self.task_managers[task_manager][index]

    def export(self) -> tuple:
        """Everything the pool holds, in its order, for a snapshot."""
        return (
            tuple(
                (tm, tuple((s.users, s.shared) for s in slots))
                for tm, slots in self.task_managers.items()
            ),
            tuple((s.task_manager, s.index) for s in self.free),
            tuple((s.task_manager, s.index) for s in self.takes_followers.values()),
            tuple((tuple(v.index for v in r.vertices), r.size, r.cancelled) for r in self.pending),
            self.demand,
            self.requested_slots,
        )

    def restore(self, image: tuple, vertex_at) -> list[SlotRequest]:
        """Take back an exported pool; ``vertex_at(index)`` finds a subtask. Returns the
        pending requests, in order."""
        task_managers, free, followers, pending, self.demand, self.requested_slots = image
        self.task_managers = {}
        for tm, slots in task_managers:
            self.task_managers[tm] = []
            for index, (users, shared) in enumerate(slots):
                slot = Slot(tm, index)
                slot.users, slot.shared = users, shared
                self.task_managers[tm].append(slot)
        self.free = deque(self.slot(tm, i) for tm, i in free)
        self.takes_followers = {id(s): s for s in (self.slot(tm, i) for tm, i in followers)}
        self.pending = deque()
        for indices, size, cancelled in pending:
            request = SlotRequest([vertex_at(i) for i in indices], size)
            request.cancelled = cancelled
            self.pending.append(request)
        return list(self.pending)

    def describe(self) -> tuple:
        return (
            tuple((s.task_manager, s.index) for s in self.free),
            tuple((s.task_manager, s.index) for s in self.takes_followers.values()),
            tuple((r.size, r.cancelled, r.vertices[0].index) for r in self.pending),
            self.demand,
            self.requested_slots,
        )
