"""The execution graph: job vertices, their subtasks, results, partitions and the groups that
connect them."""

from jobmanager.core.executiongraph.graph import ExecutionGraph, TopologyListener, TopologyUpdate
from jobmanager.core.executiongraph.groups import ConsumedPartitionGroup, ConsumerVertexGroup
from jobmanager.core.executiongraph.inputs import (
    BroadcastInputInfo,
    ExecutionVertexInputInfo,
    ExplicitInputInfo,
    FormulaInputInfo,
    InputSlice,
    JobVertexInputInfo,
    PartitionRangesInputInfo,
    SubpartitionRangesInputInfo,
    WholeInputInfo,
)
from jobmanager.core.executiongraph.partition import IntermediateResult, IntermediateResultPartition
from jobmanager.core.executiongraph.states import ExecutionState, PartitionState
from jobmanager.core.executiongraph.vertex import ExecutionJobVertex, ExecutionVertex

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
    "PartitionRangesInputInfo",
    "PartitionState",
    "SubpartitionRangesInputInfo",
    "TopologyListener",
    "TopologyUpdate",
    "WholeInputInfo",
]
