"""msgpack encoding of Tidal's messages: events, commands and what crosses a process.

A message is a frozen, slotted dataclass registered by its class name; it travels as a msgpack
extension holding ``[name, {field: value}]``, so messages nest (an event holding partition ids)
and decode to equal objects. Sequences decode as tuples, which is what the dataclasses hold.

Fields go by name because messages outlive the code that wrote them (an archived event log is
read by every later Tidal): a field added since, with a default, takes its default; a field
removed since is dropped. Messages written before format version 1 went by position
(extension 1, ``[name, *values]``); they are read through the names ``positional.V0_FIELDS``
froze for them. Never pickle: a message is data, readable by any later version that knows its
name.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar

import msgpack

from jobmanager.messages.positional import V0_FIELDS

__all__ = ["decode", "encode", "message", "register", "registered"]

T = TypeVar("T")
_EXT_POSITIONAL = 1  # before format 1: [name, *values]
_EXT_NAMED = 2  # [name, {field: value}]
_TYPES: dict[str, type] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def register(cls: type[T]) -> type[T]:
    """Register an existing frozen dataclass so it can be encoded inside messages."""
    name = cls.__name__
    if name in _TYPES and _TYPES[name] is not cls:
        raise TypeError(f"two message types are named {name!r}")
    _TYPES[name] = cls
    _FIELDS[cls] = tuple(f.name for f in fields(cls))
    return cls


def message(cls: type[T]) -> type[T]:
    """Class decorator: make ``cls`` a frozen, slotted dataclass and register it by name."""
    return register(dataclass(frozen=True, slots=True)(cls))


def registered(name: str) -> type:
    return _TYPES[name]


def _default(obj: Any) -> Any:
    names = _FIELDS.get(type(obj))
    if names is None:
        raise TypeError(f"cannot encode {type(obj).__name__}: not a registered message type")
    payload = (type(obj).__name__, {n: getattr(obj, n) for n in names})
    return msgpack.ExtType(_EXT_NAMED, msgpack.packb(payload, default=_default))


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _EXT_NAMED:
        name, values = _unpack(data)
    elif code == _EXT_POSITIONAL:
        name, *positional = _unpack(data)
        names = V0_FIELDS.get(name, ())
        if len(positional) > len(names):
            raise ValueError(
                f"message {name!r} written by position holds {len(positional)} "
                f"values; format 0 knows {len(names)} fields for it"
            )
        values = dict(zip(names, positional))
    else:
        return msgpack.ExtType(code, data)
    try:
        cls = _TYPES[name]
    except KeyError:
        raise ValueError(f"unknown message type {name!r}") from None
    try:
        return cls(**values)
    except TypeError:
        return _upcast(cls, values)


def _upcast(cls: type, values: dict) -> Any:
    """``cls`` from ``values`` written by another version: a field it no longer has is dropped;
    a field it has gained must have a default, or the message cannot be read."""
    known = _FIELDS[cls]
    missing = [
        f.name
        for f in fields(cls)
        if f.name not in values and f.default is MISSING and f.default_factory is MISSING
    ]
    if missing:
        raise ValueError(
            f"message {cls.__name__!r} was written without {', '.join(missing)}, "
            "which have no default"
        )
    return cls(**{name: value for name, value in values.items() if name in known})


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(
        data, ext_hook=_ext_hook, use_list=False, raw=False, strict_map_key=False
    )


def encode(obj: Any) -> bytes:
    return msgpack.packb(obj, default=_default)


def decode(data: bytes) -> Any:
    return _unpack(data)
