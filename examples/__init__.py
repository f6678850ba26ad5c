"""Example jobs and their references: TPC-H-shaped data, the README's demo job, TPC-H Q1 and Q3
as hand-built jobs; the real TPC-H (dbgen's tables, the 22 query texts, DuckDB's answers), and
the comparison every answer is checked with.

A package so that the benchmarks and tests import them as ``examples.*``; their vertex
functions still travel to TaskManagers by value (the client registers user modules that live
outside site-packages with cloudpickle), so Ray workers need not import this folder.
"""
