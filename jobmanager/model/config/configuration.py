"""A job's configuration: the options' values read from defaults, a YAML file, ``-D key=value``
pairs or the client call, checked, and carried across processes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgpack

from jobmanager.errors import ConfigurationError, ConfigurationFileError
from jobmanager.model.config.registry import _CONTRADICTIONS, OPTIONS
from jobmanager.model.config.scheduling import FLINK_KEYS

__all__ = ["Configuration"]


class Configuration(Mapping[str, Any]):
    """Validated option values; reading an unset option gives its default."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        for key, value in _under_tidal_keys(values or {}).items():
            self._values[key] = _parse(key, value)

    @classmethod
    def from_yaml(cls, path: str) -> Configuration:
        """The options of a YAML file; its mistakes name the file (and the line)."""
        import yaml

        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise ConfigurationFileError(path, "no such configuration file") from None
        except OSError as error:
            raise ConfigurationFileError(path, f"cannot read it: {error.strerror}") from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            raise ConfigurationFileError(where, f"not valid YAML: {problem}") from None
        if not isinstance(data, dict):
            raise ConfigurationFileError(path, "a configuration file maps option keys to values")
        try:
            return cls(_flatten(data))
        except ConfigurationError as error:
            raise ConfigurationFileError(path, str(error)) from None

    def with_overrides(self, values: Mapping[str, Any]) -> Configuration:
        merged = Configuration()
        merged._values = dict(self._values)
        for key, value in _under_tidal_keys(values).items():
            merged._values[key] = _parse(key, value)
        return merged

    def with_dynamic_properties(self, pairs: Iterable[str]) -> Configuration:
        """Apply ``-D key=value`` pairs."""
        values = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise ConfigurationError(pair, "expected key=value")
            values[key.strip()] = value.strip()
        return self.with_overrides(values)

    def __getitem__(self, key: str) -> Any:
        key = FLINK_KEYS.get(key, key)
        if key in self._values:
            return self._values[key]
        try:
            return OPTIONS[key].default
        except KeyError:
            raise ConfigurationError(key, "unknown option") from None

    def is_set(self, key: str) -> bool:
        return FLINK_KEYS.get(key, key) in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def check_consistent(self) -> None:
        """Refuse options that contradict each other (as Flink does when it builds what reads
        them), naming both keys and their values."""
        for first, second, holds, relation in _CONTRADICTIONS:
            if not holds(self[first], self[second]):
                raise ConfigurationError(
                    first, f"{self[first]} {relation} {second!r} ({self[second]})"
                )

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def to_bytes(self) -> bytes:
        """The options set, msgpack-encoded: how a configuration crosses a process."""
        return msgpack.packb(self._values)

    @classmethod
    def from_bytes(cls, data: bytes) -> Configuration:
        """The configuration ``to_bytes`` encoded, parsed and checked again here."""
        return cls(msgpack.unpackb(data, strict_map_key=False))

    def __repr__(self) -> str:
        return f"Configuration({self._values})"


def _under_tidal_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with Flink's keys for an option Tidal names otherwise (``FLINK_KEYS``) put
    under Tidal's; both keys of one option with different values are refused, naming both."""
    found: dict[str, Any] = {}
    given: dict[str, str] = {}
    for key, value in values.items():
        ours = FLINK_KEYS.get(key, key)
        if ours in found and found[ours] != value:
            raise ConfigurationError(
                key, f"{value!r} contradicts {given[ours]!r} ({found[ours]!r}): both set one option"
            )
        found[ours], given[ours] = value, key
    return found


def _parse(key: str, value: Any) -> Any:
    option = OPTIONS.get(key)
    if option is None:
        close = [k for k in OPTIONS if k.split(".")[-1] == key.split(".")[-1]]
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigurationError(key, f"unknown option{hint}")
    return option.value(value)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, full + "."))
        else:
            flat[full] = value
    return flat
