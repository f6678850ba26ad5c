"""Py4J's name lookups, remembered for the life of a TaskManager's Spark JVM.

PySpark reaches the JVM through names: ``F.col("x")`` evaluates
``getattr(sc._jvm, "org.apache.spark.sql.functions").col``, and Py4J asks the JVM, in a round
trip of its own, what each name is (a package, a class, a static method) before the call that
does the work. On two busy cores a round trip costs 0.15-0.9 ms, and building TPC-H Q1's two
functions took 571 of them, 274 of them such questions: about a third of the build's time.
The answers cannot change while the JVM runs (a class's static methods and nested classes, a
package's classes are fixed once loaded), so the view PySpark uses here asks once per name.

A static field is a value, not a name, and is read every time. A name the JVM could not
resolve is not remembered (its error comes every time). Imports added later with
``java_import`` resolve new names as before, but do not re-resolve a short name already
looked up (PySpark imports its packages when the gateway starts, before any lookup).

Only the TaskManager installs this, on its own session (``install``): it owns that process.
"""

from __future__ import annotations

import threading
from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView

__all__ = ["install"]


class _Remembered:
    """Answers by name, shared by the threads of the process (a race asks twice, no more)."""

    __slots__ = ("answers", "lock")

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.lock = threading.Lock()


class _Remembering:
    """Py4J's lookup (the next ``__getattr__`` in the class's order), asked once per name:
    a package or class comes back remembering the names under it in turn."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_remembered":
            raise AttributeError(name)
        remembered: _Remembered = self.__dict__["_remembered"]
        answer = remembered.answers.get(name)
        if answer is not None:
            return answer
        answer = super().__getattr__(name)
        if isinstance(answer, JavaClass):
            answer = _rebased(answer, RememberingJavaClass)
        elif isinstance(answer, JavaPackage):
            answer = _rebased(answer, RememberingJavaPackage)
        elif not isinstance(answer, JavaMember):
            return answer  # a static field's value
        with remembered.lock:
            return remembered.answers.setdefault(name, answer)


class RememberingJVMView(_Remembering, JVMView):
    pass


class RememberingJavaPackage(_Remembering, JavaPackage):
    pass


class RememberingJavaClass(_Remembering, JavaClass):
    pass


def _rebased(original: Any, cls: type) -> Any:
    """``original``'s state (its name, gateway client, view id) under ``cls``."""
    copy = object.__new__(cls)
    copy.__dict__.update(original.__dict__)
    copy.__dict__["_remembered"] = _Remembered()
    return copy


def install(session) -> None:
    """Have ``session``'s context, the session and the gateway look names up through one
    remembering view of the JVM (idempotent)."""
    from pyspark import SparkContext

    context = session.sparkContext
    current = context._jvm
    if isinstance(current, RememberingJVMView):
        return
    view = _rebased(current, RememberingJVMView)
    SparkContext._jvm = view
    context._gateway.jvm = view
    session._jvm = view
