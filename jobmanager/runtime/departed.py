"""The files a dead TaskManager left on its node: surveyed when it is lost, deleted when the
job releases them.

A TaskManager's partition files outlive its process (``jobmanager.core.losing``). Whatever is
done with them is done on their node: by the JobManager itself when it runs there (the usual
case on one machine), else by a Ray task pinned to the node. A node that is gone, or that
does not answer within ``timeout_s``, has nothing to survey: its files count as lost.
"""

from __future__ import annotations

import os
import shutil

import ray
import structlog
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from shuffle.survey import SurveyedFile, survey

__all__ = ["node_is_up", "remove_on_node", "survey_on_node"]

_log = structlog.get_logger("tidal.departed")


def node_is_up(node_id: str) -> bool:
    try:
        return any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes())
    except Exception as error:  # the GCS is restarting: count the node as gone
        _log.warning("nodes unknown", error=repr(error))
        return False


def survey_on_node(node_id: str, root: str, timeout_s: float) -> tuple[SurveyedFile, ...]:
    """The whole partition files under ``root`` on ``node_id``; none if it is out of reach."""
    if not node_id or not node_is_up(node_id):
        return ()
    if node_id == ray.get_runtime_context().get_node_id():
        return survey(root)
    try:
        reply = _survey_there.options(scheduling_strategy=_pinned(node_id)).remote(root)
        return tuple(tuple(found) for found in ray.get(reply, timeout=timeout_s))
    except Exception as error:
        _log.warning("no survey of a lost task manager's files", node=node_id, error=repr(error))
        return ()


def remove_on_node(node_id: str, paths: list[str]) -> None:
    """Delete files or folders on ``node_id``, without waiting; a node gone took them along."""
    if not paths:
        return
    if node_id == ray.get_runtime_context().get_node_id():
        _remove(paths)
    elif node_id and node_is_up(node_id):
        _remove_there.options(scheduling_strategy=_pinned(node_id)).remote(paths)


def _remove(paths: list[str]) -> None:
    """Partition files, or a whole shuffle directory."""
    for path in paths:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def _pinned(node_id: str) -> NodeAffinitySchedulingStrategy:
    return NodeAffinitySchedulingStrategy(node_id, soft=False)


@ray.remote(num_cpus=0, max_retries=0)
def _survey_there(root: str) -> list:
    return [list(found) for found in survey(root)]


_remove_there = ray.remote(num_cpus=0, max_retries=0)(_remove)
