"""The Spark JVM heap a TaskManager gets when the job sets none: sized from the machine, as
Spark's deployments size executors from their nodes, rather than Spark's 1 GiB default.

A quarter of the node's memory goes to Spark heaps, shared by as many TaskManagers as the node's
CPUs hold (one per ``slots`` CPUs); the rest is Python's, Arrow's, Ray's object store's and the
page cache's. The node's memory is its cgroup's limit where it has one (a container), else
its physical memory. 1 GiB at least (a smaller heap fails TPC-H's scale 1 joins), 16 GiB at
most (past that, a collection's pause grows with no gain for one task's partition).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_heap_bytes", "node_cpus", "node_memory_bytes"]

GIB = 1 << 30
_SHARE = 4  # a quarter of the node's memory for the Spark heaps
_LEAST = 1 * GIB
_MOST = 16 * GIB
_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)  # v1


def default_heap_bytes(slots: int, memory: int | None = None, cpus: int | None = None) -> int:
    """The heap of a TaskManager of ``slots`` slots on a node of ``memory`` bytes and ``cpus``
    CPUs (this machine's where not given), rounded down to a MiB."""
    memory = node_memory_bytes() if memory is None else memory
    cpus = node_cpus() if cpus is None else cpus
    task_managers = max(1, cpus // max(1, slots))
    heap = memory // _SHARE // task_managers
    return max(_LEAST, min(_MOST, heap)) >> 20 << 20


def node_memory_bytes() -> int:
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            return min(physical, int(text))
    return physical


def node_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
