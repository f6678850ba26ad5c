"""The job model: what a user writes and submits.

``JobGraph`` with its vertices, edges and partitioners; the operators a vertex runs (``spark``,
``arrow``, ``ParquetSink``); sources and the FLIP-379 inference protocols they may implement;
the configuration options. Everything here is plain data and user-facing checks.

May import: ``jobmanager.messages`` (to register its records with the codec), ``jobmanager.errors``,
``shuffle`` (ids and partitioners). Never the core, the runtime or the client.
"""
