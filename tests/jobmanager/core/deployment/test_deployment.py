from blob import BlobKey, InMemoryBlobStore
from jobmanager.core.commands import DeployTask
from jobmanager.core.deployment import TaskDeploymentDescriptorFactory
from jobmanager.core.state import JobManagerState
from jobmanager.core.view import CoreView
from jobmanager.messages import events as ev
from jobmanager.messages.codec import decode, encode
from jobmanager.messages.deployment import decode_shuffle_descriptors
from jobmanager.model.jobgraph import JobGraph, Partitioner
from jobmanager.runtime.descriptors import ShuffleDescriptorCache
from shuffle.ids import PartitionId
from shuffle.paths import partition_path
from shuffle.ranges import IndexRange


def finished_job(producers=4, consumers=3, task_managers=2):
    g = JobGraph("deploy")
    a = g.add_vertex("a", producers)
    b = g.add_vertex("b", consumers)
    g.connect(a, b, Partitioner.hash("k"))
    state = JobManagerState(g, job_id="j")
    state.handle(ev.JobStarted())
    for t in range(task_managers):
        state.handle(ev.TaskManagerRegistered(f"tm{t}", producers, f"node{t}", f"/shuffle/tm{t}"))
    for k in range(producers):
        state.handle(
            ev.TaskFinished("a", k, 0, (ev.ProducedPartition.of("a->b", [1] * consumers),))
        )
    return state


def factory(state, min_size=1 << 20, blobs=None):
    blobs = blobs or InMemoryBlobStore()
    cache = ShuffleDescriptorCache(blobs, min_size)
    return TaskDeploymentDescriptorFactory("j", state.graph, state.task_managers, cache), blobs


def test_consumers_get_their_ranges_and_the_groups_descriptors():
    state = finished_job()
    f, _ = factory(state)
    tdd = f.create(state.graph.vertex("b", 1))
    assert (tdd.vertex, tdd.subtask, tdd.attempt, tdd.parallelism) == ("b", 1, 0, 3)
    (gate,) = tdd.inputs
    assert gate.result == "a->b"
    assert [(s.partitions, s.subpartitions) for s in gate.slices] == [
        (IndexRange(0, 3), IndexRange(1, 1))
    ]
    descriptors = decode_shuffle_descriptors(gate.descriptors.inline)
    assert [d.partition_id for d in descriptors] == [PartitionId("a->b", i) for i in range(4)]
    first = descriptors[0]
    assert first.task_manager_id in ("tm0", "tm1") and first.num_subpartitions == 3
    root = f"/shuffle/{first.task_manager_id}"
    assert first.path == partition_path(root, PartitionId("a->b", 0), 0)
    assert first.node_id == "node" + first.task_manager_id[-1]
    assert decode(encode(tdd)) == tdd  # travels as msgpack


def test_producers_learn_what_to_write():
    state = finished_job()
    f, _ = factory(state)
    tdd = f.create(state.graph.vertex("a", 2))
    (out,) = tdd.outputs
    assert (out.result, out.index, out.num_subpartitions, out.partitioner, out.keys) == (
        "a->b",
        2,
        3,
        "hash",
        ("k",),
    )
    assert tdd.inputs == ()


def test_descriptors_are_built_once_per_group_and_shared():
    state = finished_job(producers=50, consumers=40)
    f, _ = factory(state)
    tdds = [f.create(v) for v in state.graph.job_vertex("b").vertices]
    assert f.cache.builds == 1
    assert len({id(t.inputs[0].descriptors) for t in tdds}) == 1


def test_large_descriptor_sets_are_offloaded_to_the_blob_store():
    state = finished_job(producers=200, consumers=2)
    small, _ = factory(state, min_size=1 << 30)
    inline = small.create(state.graph.vertex("b", 0)).inputs[0].descriptors
    assert inline.inline and not inline.offloaded
    large, blobs = factory(state, min_size=64)
    offloaded = large.create(state.graph.vertex("b", 0)).inputs[0].descriptors
    assert offloaded.offloaded and offloaded.inline == b""
    assert blobs.get(BlobKey(offloaded.blob_key)) == inline.inline


def test_a_reset_partition_makes_the_cached_entry_stale_and_drops_its_blob():
    state = finished_job(producers=20, consumers=2)
    f, blobs = factory(state, min_size=64)
    before = f.create(state.graph.vertex("b", 0)).inputs[0].descriptors
    partition = state.graph.vertex("a", 3).produced[0]
    partition.mark_lost()  # its TaskManager died
    partition.reset()
    partition.producer.attempt = 1
    partition.mark_finished("tm1")
    after = f.create(state.graph.vertex("b", 0)).inputs[0].descriptors
    assert f.cache.builds == 2 and after.version > before.version
    assert not blobs.contains(BlobKey(before.blob_key))
    moved = decode_shuffle_descriptors(blobs.get(BlobKey(after.blob_key)))[3]
    assert moved.path.endswith("3-1.tpf") and moved.task_manager_id == "tm1"


def test_dropping_groups_deletes_their_blobs():
    state = finished_job(producers=20, consumers=2)
    f, blobs = factory(state, min_size=64)
    entry = f.create(state.graph.vertex("b", 0)).inputs[0].descriptors
    assert f.cache.drop([entry.group]) == [entry.blob_key]
    assert not blobs.contains(BlobKey(entry.blob_key)) and len(f.cache) == 0


def test_consumers_skip_partitions_that_wrote_nothing_for_them():
    g = JobGraph("sparse")
    g.connect(g.add_vertex("a", 16), g.add_vertex("b", 16), Partitioner.REBALANCE)
    state = JobManagerState(g, job_id="j")
    state.handle(ev.JobStarted())
    state.handle(ev.TaskManagerRegistered("tm0", 16, "node0", "/shuffle/tm0"))
    for k in range(16):
        counts = [0] * 16
        counts[k] = 10  # producer k wrote one row, to subpartition k
        state.handle(ev.TaskFinished("a", k, 0, (ev.ProducedPartition.of("a->b", counts),)))
    f, _ = factory(state)
    assert f.create(state.graph.vertex("b", 5)).inputs[0].partitions == (5,)
    dense = finished_job(producers=4, consumers=3)
    f, _ = factory(dense)
    assert f.create(dense.graph.vertex("b", 1)).inputs[0].partitions is None


def test_the_core_view_describes_a_deploy_command_as_the_factory_does():
    state = finished_job()
    f, _ = factory(state)
    describe = CoreView(state).descriptors("j", f.cache, {}, 16 << 20)
    assert describe(DeployTask("b", 1, 0, "tm0", 0)) == f.create(state.graph.vertex("b", 1))


def test_the_core_view_names_the_groups_a_released_partition_fed():
    state = finished_job()
    (group,) = state.graph.vertex("b", 0).consumed_groups
    assert CoreView(state).groups_fed_by([PartitionId("a->b", 2)]) == {group.id}
