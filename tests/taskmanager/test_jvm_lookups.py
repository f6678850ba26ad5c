"""The TaskManager's Spark session asks the JVM what a name is once: building a query again
sends no reflection question, while a static field's value and a missing name are asked
about every time. Real PySpark (the ``spark_provider`` session), Py4J's commands counted."""

from __future__ import annotations

import pytest
from py4j import clientserver
from py4j.java_gateway import JVMView
from py4j.protocol import Py4JError

from taskmanager.jvm_lookups import RememberingJVMView, install

pytestmark = pytest.mark.spark


@pytest.fixture
def sent(monkeypatch):
    """Every Py4J command this process sends from now on, as its first line (``r``: a
    reflection question; ``c``: a call)."""
    commands: list[str] = []
    send = clientserver.ClientServerConnection.send_command

    def counted(connection, command):
        commands.append(command.split("\n", 1)[0])
        return send(connection, command)

    monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", counted)
    return commands


def total_of_doubled_ids(session) -> int:
    from pyspark.sql import functions as F

    frame = session.range(5).select(F.sum(F.col("id") * 2).alias("total"))
    return frame.collect()[0]["total"]


def questions(commands: list[str]) -> int:
    return sum(1 for command in commands if command == "r")


def test_a_query_built_again_asks_no_names_and_gives_the_same_result(spark_provider, sent):
    session = spark_provider.session()
    assert isinstance(session._jvm, RememberingJVMView)
    assert total_of_doubled_ids(session) == 20
    sent.clear()
    assert total_of_doubled_ids(session) == 20
    assert questions(sent) == 0 and sent.count("c") > 0, sent


def test_without_it_the_same_query_asks_the_jvm_names(spark_provider, sent):
    """The measure above can fail: a plain view of the same JVM asks every time."""
    from pyspark import SparkContext

    session = spark_provider.session()
    remembering = session._jvm
    plain = object.__new__(JVMView)
    plain.__dict__.update({k: v for k, v in remembering.__dict__.items() if k != "_remembered"})
    try:
        SparkContext._jvm = session.sparkContext._gateway.jvm = session._jvm = plain
        total_of_doubled_ids(session)
        sent.clear()
        assert total_of_doubled_ids(session) == 20
        assert questions(sent) > 0
    finally:
        SparkContext._jvm = session.sparkContext._gateway.jvm = session._jvm = remembering


def test_a_static_field_is_read_each_time_and_a_missing_name_is_not_remembered(
    spark_provider, sent
):
    jvm = spark_provider.session()._jvm
    integer = jvm.java.lang.Integer
    assert integer.MAX_VALUE == 2**31 - 1
    sent.clear()
    assert integer.MAX_VALUE == 2**31 - 1
    assert questions(sent) == 1  # a value, asked for again
    for _ in range(2):
        with pytest.raises(Py4JError, match="noSuchMember does not exist"):
            jvm.java.lang.System.noSuchMember
    assert "noSuchMember" not in jvm.java.lang.System._remembered.answers


def test_the_context_the_session_and_the_gateway_share_one_view_installed_once(spark_provider):
    from pyspark import SparkContext

    session = spark_provider.session()
    view = session._jvm
    install(session)
    assert session._jvm is view is SparkContext._jvm is session.sparkContext._gateway.jvm
    assert getattr(view, "org.apache.spark.sql.functions")._fqn == "org.apache.spark.sql.functions"
