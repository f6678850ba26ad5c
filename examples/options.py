"""``-D key=value`` on the example and benchmark command lines: Tidal options for the job."""

from __future__ import annotations

import argparse

__all__ = ["add_option_flag", "parse_options"]


def add_option_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-D",
        dest="options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Tidal option for the job, e.g. -D taskmanager.numberOfTaskSlots=2",
    )


def parse_options(pairs: list[str]) -> dict[str, str]:
    """The pairs as a config dict; the client checks the keys and values and names a bad one."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"-D {pair!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    return options
