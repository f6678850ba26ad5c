"""What an option is (its key, parse, default and description) and how its values are read:
durations, memory sizes, bounded numbers, choices, class names."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jobmanager.errors import ConfigurationError

__all__ = ["Option", "parse_duration_ms", "parse_memory_size"]

_DURATION_UNITS = {
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60_000,
    "m": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}

_MEMORY_UNITS = {
    "b": 1,
    "bytes": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "kibibytes": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "mebibytes": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "gibibytes": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
    "tebibytes": 1 << 40,
}

_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def _parse_amount(value: Any, units: dict[str, int], what: str, a_what: str) -> int:
    """``value`` in the smallest of ``units``: an integer as it is, a text with a number and
    one of ``units`` (none: the smallest)."""
    if isinstance(value, bool):
        raise TypeError(f"{a_what}, not a boolean")
    if isinstance(value, int):
        return value
    text = str(value)
    match = _AMOUNT.match(text)
    if not match or match.group(2).lower() not in units and match.group(2):
        raise ValueError(f"not a {what}: {text!r} (examples: {', '.join(list(units)[:4])})")
    unit = units[match.group(2).lower()] if match.group(2) else 1
    return int(float(match.group(1)) * unit)


def parse_duration_ms(value: Any) -> int:
    """``"1 s"``, ``"500 ms"``, ``"1 min"`` or a number of milliseconds."""
    return _parse_amount(value, _DURATION_UNITS, "duration", "a duration")


def parse_memory_size(value: Any) -> int:
    """``"16 mb"``, ``"1 MiB"``, ``"1g"`` or a number of bytes."""
    return _parse_amount(value, _MEMORY_UNITS, "memory size", "a size")


def _int(minimum: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"expected an integer, got {value!r}")
        number = int(value)
        if number < minimum:
            raise ValueError(f"must be at least {minimum}, got {number}")
        return number

    return parse


def _float(minimum: float, maximum: float | None = None) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool):
            raise TypeError(f"expected a number, got {value!r}")
        number = float(value)
        if number < minimum or (maximum is not None and number > maximum):
            raise ValueError(f"must be within [{minimum}, {maximum}], got {number}")
        return number

    return parse


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _choice(*choices: str, aliases: Mapping[str, str] | None = None) -> Callable[[Any], str]:
    lookup = {c.lower(): c for c in choices}
    lookup.update({k.lower(): v for k, v in (aliases or {}).items()})

    def parse(value: Any) -> str:
        try:
            return lookup[str(value).strip().lower()]
        except KeyError:
            raise ValueError(f"expected one of {', '.join(choices)}; got {value!r}") from None

    return parse


_CLASS_NAME = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def _class_names(value: Any) -> tuple[str, ...]:
    """Qualified class names, as a list or one string separated by ``;`` or ``,``; a bare name
    is a builtin (``TypeError`` is ``builtins.TypeError``)."""
    items = re.split(r"[;,]", value) if isinstance(value, str) else list(value)
    names = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        if not _CLASS_NAME.match(item):
            raise ValueError(f"not a class name: {item!r}")
        names.append(item if "." in item else f"builtins.{item}")
    return tuple(names)


def _names(value: Any) -> tuple[str, ...]:
    """Names, as a list or one string separated by ``,``, lowercased, the empty ones dropped."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(name for name in (str(i).strip().lower() for i in items) if name)


def _refusing(
    parse: Callable[[Any], int], refused: Callable[[int], bool], why: str
) -> Callable[[Any], int]:
    """``parse``, then an error saying ``why`` for a value ``refused`` says is out of range."""

    def checked(value: Any) -> int:
        parsed = parse(value)
        if refused(parsed):
            raise ValueError(why)
        return parsed

    return checked


_positive_duration = _refusing(
    parse_duration_ms, lambda ms: ms < 0, "a duration cannot be negative"
)
_positive_memory = _refusing(parse_memory_size, lambda size: size < 1, "must be at least one byte")
_retained_jobs = _refusing(
    _int(-1), lambda number: number == 0, "must be -1 (keep all) or at least 1, got 0"
)


def _memory_or_off(value: Any) -> int:
    """A size, or -1 for never."""
    if value in (-1, "-1"):
        return -1
    return parse_memory_size(value)


@dataclass(frozen=True, slots=True)
class Option:
    """One option: its key (the text a user writes), how a value is parsed and checked, its
    default and what it does. Code reads an option through its constant, ``config[OPTION.key]``,
    never through the key's text, so each option has this one home."""

    key: str
    parse: Callable[[Any], Any]
    default: Any
    description: str

    def value(self, raw: Any) -> Any:
        """``raw`` parsed and checked (None stays None: unset); a bad one is an error naming
        the key."""
        if raw is None:
            return None
        try:
            return self.parse(raw)
        except (TypeError, ValueError) as error:
            raise ConfigurationError(self.key, f"bad value {raw!r}: {error}") from None
