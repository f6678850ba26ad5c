"""The pure scheduling core: ``JobManagerState.handle(event) -> Step`` (events, commands).

The state and its one mutator, commands, admission checks, the execution graph, the scheduler
(pipelined regions, scheduling strategies, adaptive decisions, failover, partition release,
slots), and the factory of task deployment descriptors. Deterministic: replaying a job's events
into a fresh state rebuilds the same state.

May import: the job model, ``jobmanager.messages``, ``jobmanager.errors``, ``shuffle``, ``blob``'s
store interface. Never the runtime, the client, Ray, PySpark, a clock or the file system (a
test reads every import).
"""
