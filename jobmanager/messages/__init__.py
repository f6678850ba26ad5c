"""The messages that cross processes: a leaf every other part may use.

The codec (msgpack, registered by class name), the events (what a TaskManager reports, and
everything the JobManager appends to a job's event log, which a later JobManager reads back),
and the task deployment descriptors a TaskManager receives. Frozen, slotted dataclasses only.

May import: ``jobmanager.errors`` and ``shuffle``'s ids and ranges. Nothing of the job model,
the core, the runtime or the client: a TaskManager loads this and no scheduling code.
"""
