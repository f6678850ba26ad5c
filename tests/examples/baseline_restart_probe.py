"""Run as a script by ``test_benchmarks.py``, in a process of its own (PySpark keeps one JVM per
process, and this one's is killed): the TPC-H baseline's session, its JVM killed by pid as an
out-of-memory death ends it, then the session ``fresh_spark_session`` gives runs a query.
Prints the two JVMs' pids and the query's count as JSON."""

from __future__ import annotations

import json
import os
import signal

from pyspark import SparkContext

from tests.examples.test_benchmarks import load

tpch = load("tpch")
session = tpch.spark_session()
killed = SparkContext._gateway.proc.pid
os.kill(killed, signal.SIGKILL)
SparkContext._gateway.proc.wait()
session = tpch.fresh_spark_session(session)
print(
    json.dumps(
        {"killed": killed, "new": SparkContext._gateway.proc.pid, "count": session.range(3).count()}
    )
)
session.stop()
