"""The planner's front end: a query's text becomes a logical plan (``jobmanager.planner.logical``).

``parse`` reads Spark's dialect and qualifies the columns against the catalog, ``scope``
resolves the names a query may read, and ``translate`` (with ``relations``, ``subqueries``,
``grouping``, ``grouping_sets``, ``ordering``, ``in_task`` and ``whole_query``) builds the plan.
"""
