"""Identifiers shared by the scheduler and the data plane."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PartitionId"]


@dataclass(frozen=True, slots=True, order=True)
class PartitionId:
    """One result partition: the output of producer subtask ``index`` for result ``result``.

    ``result`` is the id of the intermediate result (one per job edge, e.g. ``"orders->join"``).
    """

    result: str
    index: int

    def __str__(self) -> str:
        return f"{self.result}#{self.index}"
