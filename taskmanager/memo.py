"""What a TaskManager works out once per job and reuses across its tasks.

A thousand consumers of one group decode the same thousand ShuffleDescriptors; every task of a
vertex unpickles the same code; every task of a source lists the same files. Each is computed
for the first task that needs it and kept, in a small LRU, for the others of the job.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["Memo"]


class Memo:
    """A thread-safe LRU of computed values; two tasks asking at once may both compute."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = compute()
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.capacity:
                self._values.popitem(last=False)
        return value
