"""What the JobManager decides when it takes a job: the sources whose answer decides a chain
are asked then, their answers recorded in ``JobSubmitted`` (so a replay never asks again), and
a source that infers one task chains into the one-task vertex it feeds."""

from __future__ import annotations

from jobmanager.core import commands as cmd
from jobmanager.core.admission import decide_admission, sources_to_ask
from jobmanager.core.replay import new_state
from jobmanager.core.scheduler.adaptive.settings import decider_settings
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.model.config import (
    AVG_DATA_VOLUME_PER_TASK,
    MIN_PARALLELISM,
    OPERATOR_CHAINING,
    SOURCE_DATA_VOLUME_PER_TASK,
    Configuration,
)
from jobmanager.model.inference import infer_vertex_parallelism
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.model.operators import ParquetSink, spark
from jobmanager.model.sources import FileSource
from jobmanager.simulation.cluster import SimulatedRun, SimulatedTaskManagers
from tests.jobmanager.model.files import numbers, write_parquet

VOLUME = AVG_DATA_VOLUME_PER_TASK.key
SOURCE_VOLUME = SOURCE_DATA_VOLUME_PER_TASK.key


def ident(frame):
    return frame


def q1_shaped(data: str) -> JobGraph:
    g = JobGraph("q1")
    src = g.add_vertex("lines", operator=spark(ident), sources=[FileSource(data)])
    final = g.add_vertex("final", parallelism=1, operator=spark(ident))
    sink = g.add_vertex("sink", operator=ParquetSink("/out"))
    g.connect(src, final, Partitioner.hash("id"))
    g.connect(final, sink, Partitioner.FORWARD)
    return g


def take(graph: JobGraph, config: Configuration, cpus: int = 2):
    """What the shell does when it takes the job: ask, decide, record; then the state."""
    asked = sources_to_ask(graph, config, cpus)
    answers = [
        infer_vertex_parallelism(name, graph.vertex(name).sources, context)
        for name, context in asked.items()
    ]
    chains, inferred = decide_admission(graph, config, answers)
    submitted = decode(
        encode(
            ev.JobSubmitted(
                graph.name,
                "",
                tuple(config.to_dict().items()),
                0.0,
                cpus,
                (),
                ("/out",),
                chains,
                inferred,
            )
        )
    )
    return asked, submitted


def run(graph: JobGraph, submitted: ev.JobSubmitted) -> tuple[SimulatedRun, list]:
    state = new_state(graph, submitted, "test")
    commands: list = []
    handle = state.handle

    def observed(event):
        out = handle(event)
        commands.extend(out.commands)
        return out

    state.handle = observed
    simulated = SimulatedRun(state, SimulatedTaskManagers(state.graph), record=True)
    assert simulated.run() is not None
    return simulated, commands


def files(tmp_path, count: int, rows: int = 500) -> str:
    for n in range(count):
        write_parquet(tmp_path / "d" / f"part-{n}.parquet", numbers(rows, start=n * rows))
    return str(tmp_path / "d")


def test_a_small_source_feeding_one_task_is_asked_at_once_and_chained_into_it(tmp_path):
    config = Configuration({})
    graph = q1_shaped(files(tmp_path, 3))
    asked, submitted = take(graph, config, cpus=2)
    assert list(asked) == ["lines"] and asked["lines"].slots == 2
    assert asked["lines"].data_volume_per_task == config[SOURCE_VOLUME]
    assert submitted.chains == (("lines", "final", "sink"),)
    (answer,) = submitted.inferred
    assert (answer.vertex, answer.parallelism) == ("lines -> final -> sink", 1)
    assert str(tmp_path / "d") in answer.detail and "3 files" in answer.detail
    assert answer.split_keys == ()  # no blob store here: the task lists them itself
    simulated, commands = run(graph, submitted)
    assert simulated.cluster.terminated.status == "FINISHED"
    assert not any(type(c) is cmd.InferSourceParallelism for c in commands)  # never asked again
    assert [(v.name, v.subtask) for v in simulated.state.graph.vertices()] == [
        ("lines -> final -> sink", 0)
    ]
    assert simulated.state.source_listing("lines -> final -> sink") == (answer.detail, ())
    replayed = new_state(graph, submitted, "test")
    for event in simulated.events:
        replayed.handle(decode(encode(event)))
    assert replayed.describe() == simulated.state.describe()


def test_a_source_that_infers_more_tasks_is_not_chained_and_keeps_its_answer(tmp_path):
    config = Configuration({VOLUME: 1})  # a byte a task: one task per file
    graph = q1_shaped(files(tmp_path, 4))
    _, submitted = take(graph, config)
    assert submitted.chains == (("final", "sink"),)
    assert [(a.vertex, a.parallelism) for a in submitted.inferred] == [("lines", 4)]
    simulated, commands = run(graph, submitted)
    assert simulated.cluster.terminated.status == "FINISHED"
    assert not any(type(c) is cmd.InferSourceParallelism for c in commands)
    assert simulated.state.graph.job_vertex("lines").parallelism == 4


def test_a_sources_own_volume_per_task_sizes_its_tasks_and_no_other_vertexs(tmp_path):
    """With ``source-data-volume-per-task`` set, a source's tasks read that much (the four
    files are one task, chained into the final one) while every other vertex keeps the
    volume per task; unset, a source is sized as any vertex."""
    graph = q1_shaped(files(tmp_path, 4))
    config = Configuration({VOLUME: 1, SOURCE_VOLUME: "1 gb"})
    asked, submitted = take(graph, config)
    assert asked["lines"].data_volume_per_task == 1 << 30
    assert decider_settings(config).data_volume_per_task == 1
    assert submitted.chains == (("lines", "final", "sink"),)
    assert [(a.vertex, a.parallelism) for a in submitted.inferred] == [
        ("lines -> final -> sink", 1)
    ]
    unset, _ = take(graph, Configuration({VOLUME: 1}))
    assert unset["lines"].data_volume_per_task == 1


def test_a_source_whose_inference_fails_decides_nothing_and_fails_the_job_when_due(tmp_path):
    graph = q1_shaped(str(tmp_path / "nowhere"))
    _, submitted = take(graph, Configuration({}))
    assert (submitted.chains, submitted.inferred) == ((("final", "sink"),), ())
    simulated, commands = run(graph, submitted)
    assert any(type(c) is cmd.InferSourceParallelism for c in commands)  # asked again
    terminated = simulated.cluster.terminated
    assert terminated.status == "FAILED" and "nowhere" in terminated.cause


def test_no_source_is_asked_early_where_no_chain_depends_on_it(tmp_path):
    graph = q1_shaped(files(tmp_path, 1))
    graph.vertex("final").parallelism = 2
    assert sources_to_ask(graph, Configuration({}), 2) == {}
    off = Configuration({OPERATOR_CHAINING.key: False})
    assert sources_to_ask(q1_shaped(files(tmp_path, 1)), off, 2) == {}


def q3_shaped(data: str, small: str) -> JobGraph:
    """The scan joins a small side sent to it whole, then one task takes the result."""
    g = q1_shaped(data)
    orders = g.add_vertex("orders", operator=spark(ident), sources=[FileSource(small)])
    g.connect(orders, g.vertex("lines"), Partitioner.BROADCAST)
    return g


def test_a_scan_fed_only_by_a_broadcast_chains_into_the_one_task_after_it(tmp_path):
    """Its broadcast input counts no bytes, so with the least parallelism 1 its sources decide,
    when the job is taken; the chain then waits for the broadcast, as the scan would."""
    small = tmp_path / "small"
    write_parquet(small / "part-0.parquet", numbers(50))
    graph = q3_shaped(files(tmp_path, 3), str(small))
    asked, submitted = take(graph, Configuration({}))
    assert list(asked) == ["lines"]
    assert submitted.chains == (("lines", "final", "sink"),)
    assert [(a.vertex, a.parallelism) for a in submitted.inferred] == [
        ("lines -> final -> sink", 1)
    ]
    simulated, commands = run(graph, submitted)
    assert simulated.cluster.terminated.status == "FINISHED"
    assert sorted((v.name, v.subtask) for v in simulated.state.graph.vertices()) == [
        ("lines -> final -> sink", 0),
        ("orders", 0),
    ]
    chain = simulated.state.graph.job_vertex("lines -> final -> sink")
    assert [p.name for p in chain.producers] == ["orders"]
    replayed = new_state(graph, submitted, "test")
    for event in simulated.events:
        replayed.handle(decode(encode(event)))
    assert replayed.describe() == simulated.state.describe()


def test_with_a_least_parallelism_above_one_the_broadcast_fed_scan_is_not_chained(tmp_path):
    small = tmp_path / "small"
    write_parquet(small / "part-0.parquet", numbers(50))
    graph = q3_shaped(files(tmp_path, 3), str(small))
    config = Configuration({MIN_PARALLELISM.key: 2})
    asked, submitted = take(graph, config)
    assert asked == {} and submitted.chains == (("final", "sink"),)
    simulated, _ = run(graph, submitted)
    assert simulated.cluster.terminated.status == "FINISHED"
    assert simulated.state.graph.job_vertex("lines").parallelism == 2
