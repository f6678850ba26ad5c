"""The executor carries out every command the core can give, each by exactly one handler."""

import inspect
from typing import get_args

import pytest

from jobmanager.core import commands as cmd
from jobmanager.runtime.executor import HANDLERS, CommandExecutor


def command_types() -> set[type]:
    return {
        value
        for _, value in inspect.getmembers(cmd, inspect.isclass)
        if value.__module__ == cmd.__name__
    }


def test_the_union_of_commands_names_every_command_class():
    assert set(get_args(cmd.Command)) == command_types()


def test_every_command_has_exactly_one_handler_and_the_table_nothing_else():
    assert set(HANDLERS) == command_types()
    handlers = list(HANDLERS.values())
    assert len(set(handlers)) == len(handlers), "one handler serves two commands"
    for handler in handlers:
        assert getattr(CommandExecutor, handler.__name__) is handler


def test_a_command_without_a_handler_is_refused_by_name():
    class Unknown:
        pass

    executor = CommandExecutor.__new__(CommandExecutor)  # no Ray: the table is all it uses
    executor._staged = {}
    with pytest.raises(TypeError, match="no way to carry out .*Unknown"):
        executor.execute_all([Unknown()])
