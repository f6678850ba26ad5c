"""What a sink is, to the parts that only need to tell one apart.

Apart from ``jobmanager.model.operators`` because chaining, which the pure scheduling core runs
when it takes a job and on replay, asks "is this vertex a sink?", and the operators' module
resolves a sink's path against the working directory and ships user code with cloudpickle.
"""

from __future__ import annotations

__all__ = ["Sink"]


class Sink:
    """A vertex's operator that ends the job's data flow by writing a result, committed when
    the whole job finishes (``ParquetSink``): it has no outgoing edges, and a chain ends at it."""

    __slots__ = ()
