"""Where the stress run reads its clock while the JobManager builds a job's graph.

The scheduling core never reads a clock; it tells a probe where a phase ends, and only the
stress run's probe looks at the time.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["NoProbe", "Probe", "ProbeListener"]


class Probe(Protocol):
    """Told where the work of building the graph starts (``initializing``) and where its parts
    end (``execution_graph_built``, ``regions_built``); the stress run reads a clock there."""

    def mark(self, phase: str) -> None: ...


class NoProbe:
    def mark(self, phase: str) -> None:
        pass


class ProbeListener:
    """A topology listener that marks ``phase`` each time the graph grows; placed between the
    other listeners, it times their work."""

    def __init__(self, probe: Probe, phase: str) -> None:
        self.probe = probe
        self.phase = phase

    def on_topology_updated(self, update) -> None:
        self.probe.mark(self.phase)
