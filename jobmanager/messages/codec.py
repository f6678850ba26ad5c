"""msgpack encoding of Tidal's messages: events, commands and what crosses a process.

A message is a frozen, slotted dataclass registered by its class name; it travels as a msgpack
extension holding ``[name, *field values]``, so messages nest (an event holding partition ids)
and decode to equal objects. Sequences decode as tuples, which is what the dataclasses hold.
Never pickle: a message is data, readable by any later version that knows its name.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

import msgpack

__all__ = ["decode", "encode", "message", "register", "registered"]

T = TypeVar("T")
_EXT_MESSAGE = 1
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
    payload = [type(obj).__name__]
    payload.extend(getattr(obj, n) for n in names)
    return msgpack.ExtType(_EXT_MESSAGE, msgpack.packb(payload, default=_default))


def _ext_hook(code: int, data: bytes) -> Any:
    if code != _EXT_MESSAGE:
        return msgpack.ExtType(code, data)
    name, *values = msgpack.unpackb(data, ext_hook=_ext_hook, use_list=False, raw=False)
    try:
        cls = _TYPES[name]
    except KeyError:
        raise ValueError(f"unknown message type {name!r}") from None
    return cls(*values)


def encode(obj: Any) -> bytes:
    return msgpack.packb(obj, default=_default)


def decode(data: bytes) -> Any:
    return msgpack.unpackb(
        data, ext_hook=_ext_hook, use_list=False, raw=False, strict_map_key=False
    )
