"""The Ray shells around the core: the only code of the JobManager that touches the world.

The JobManager actor and its main loop, the executor that carries out the core's commands and
turns every outcome into an event, the ResourceManager that keeps TaskManagers warm and leases
them, the job's event log, the sink commit, the status a client reads, actor names.

May import: the core, the job model, ``jobmanager.messages``, ``blob``, ``shuffle``,
``taskmanager`` (to start TaskManager actors), Ray, clocks and file systems.
"""
