"""Configuration options, under Flink's keys where Flink has one.

Values come from the defaults, then a YAML file, then ``-D key=value`` pairs or the client call.
An unknown key or a bad value is an error that names the key.

A configuration crosses a process (to the ResourceManager that leases a job its TaskManagers,
to a TaskManager it starts) as its msgpack form, ``to_bytes``, and is parsed there by
``from_bytes``: every reader has the same options with the same defaults, none its own copy.

The options are declared by area (``scheduling``, ``recovery``, ``cluster``, ``stores``,
``optimizer``), each a constant that code reads as ``config[OPTION.key]``, never by the key's
text; ``registry.OPTIONS`` lists them all by key.
The package exports what each module exports (its ``__all__``), so a new name is listed once.
"""

from __future__ import annotations

from jobmanager.model.config import (
    cluster,
    configuration,
    optimizer,
    option,
    recovery,
    registry,
    scheduling,
    stores,
)
from jobmanager.model.config.cluster import *
from jobmanager.model.config.configuration import *
from jobmanager.model.config.optimizer import *
from jobmanager.model.config.option import *
from jobmanager.model.config.recovery import *
from jobmanager.model.config.registry import *
from jobmanager.model.config.scheduling import *
from jobmanager.model.config.stores import *

__all__ = (
    cluster.__all__
    + configuration.__all__
    + optimizer.__all__
    + option.__all__
    + recovery.__all__
    + registry.__all__
    + scheduling.__all__
    + stores.__all__
)
