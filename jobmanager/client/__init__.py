"""What a user drives Tidal with: the Python ``Client`` and job handles, the ``tidal`` CLI,
progress displays, the job result.

May import: the runtime (to reach the cluster through Ray), the simulation (``tidal stress``),
and the core read-only. Nothing below imports from here.
"""
