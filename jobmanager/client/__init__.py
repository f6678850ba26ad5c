"""What a user drives Tidal with: the Python ``Client`` and job handles, queries (planned
here), the ``tidal`` CLI, progress displays, the job result.

May import: the runtime (to reach the cluster through Ray), the simulation (``tidal stress``),
the planner (a query becomes a job in the client), and the core read-only. Nothing below
imports from here.
"""
