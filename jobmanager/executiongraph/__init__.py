"""The execution graph: job vertices, their subtasks, results, partitions and the groups that
connect them."""

from jobmanager.executiongraph.graph import ExecutionGraph, TopologyListener
from jobmanager.executiongraph.groups import ConsumedPartitionGroup, ConsumerVertexGroup
from jobmanager.executiongraph.inputs import (
    BroadcastInputInfo,
    ExecutionVertexInputInfo,
    ExplicitInputInfo,
    FormulaInputInfo,
    InputSlice,
    JobVertexInputInfo,
    SubpartitionRangesInputInfo,
)
from jobmanager.executiongraph.partition import IntermediateResult, IntermediateResultPartition
from jobmanager.executiongraph.states import ExecutionState, PartitionState
from jobmanager.executiongraph.vertex import ExecutionJobVertex, ExecutionVertex

__all__ = [
    "BroadcastInputInfo",
    "ConsumedPartitionGroup",
    "ConsumerVertexGroup",
    "ExecutionGraph",
    "ExecutionJobVertex",
    "ExecutionState",
    "ExecutionVertex",
    "ExecutionVertexInputInfo",
    "ExplicitInputInfo",
    "FormulaInputInfo",
    "InputSlice",
    "IntermediateResult",
    "IntermediateResultPartition",
    "JobVertexInputInfo",
    "PartitionState",
    "SubpartitionRangesInputInfo",
    "TopologyListener",
]
