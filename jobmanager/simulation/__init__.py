"""Simulated TaskManagers driving the real scheduling core, and ``tidal stress`` on top.

Beside the runtime: it runs the same core with no Ray, no Spark and no data, answering each
command at once, so the core can be measured at 10,000 x 10,000 in one process.

May import: the core, the job model, ``jobmanager.messages``. Never the runtime or Ray.
"""
