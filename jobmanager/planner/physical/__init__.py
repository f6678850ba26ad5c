"""The planner's physical side: the optimised logical plan becomes a job graph.

``cut`` cuts the plan into ``stages`` at its exchanges (with ``aggregates``, ``distribution``,
``join_stages``, ``semi_keys`` and ``whole_reads``), ``joinmarks`` marks the shuffled joins the
JobManager may still broadcast, ``joinplans`` records each stage's joins, ``sqlgen`` writes
each stage's SQL and ``graph`` makes the job graph.
"""
