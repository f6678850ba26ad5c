"""Where each vertex of a job graph goes in its picture: layers left to right, in the order
data flows, and within a layer an order that keeps edges from crossing where it can.

A vertex's layer is the longest path from a source to it, so every edge points right. Within
a layer, vertices are ordered by the mean position of their neighbours (the barycenter
heuristic of Sugiyama's layered drawing, as graphviz's ``dot`` does it), sweeping right and
then left a few times. Job graphs have tens of vertices, not thousands: simple beats clever.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["layered_layout"]

_SWEEPS = 4


def layered_layout(
    nodes: Sequence[str], edges: Sequence[tuple[str, str]]
) -> dict[str, tuple[int, int]]:
    """``(layer, position in its layer)`` of every node; ``edges`` must not form a cycle."""
    inputs: dict[str, list[str]] = {n: [] for n in nodes}
    outputs: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        outputs[source].append(target)
        inputs[target].append(source)
    layers = _layers(nodes, inputs, outputs)
    for sweep in range(_SWEEPS):
        if sweep % 2 == 0:
            _sweep(layers, range(1, len(layers)), inputs, -1)
        else:
            _sweep(layers, range(len(layers) - 2, -1, -1), outputs, +1)
    return {node: (k, i) for k, members in enumerate(layers) for i, node in enumerate(members)}


def _sweep(layers: list[list[str]], order: range, neighbours: dict, towards: int) -> None:
    """Reorder each layer in ``order`` by the mean position of its nodes' ``neighbours`` in
    the layer ``towards`` it (-1: the one before, +1: the one after)."""
    for k in order:
        position = {n: i for i, n in enumerate(layers[k + towards])}
        layers[k] = sorted(
            layers[k],
            key=lambda n, k=k: _barycenter(n, neighbours, position, layers[k].index(n)),
        )


def _barycenter(
    node: str, neighbours: dict[str, list[str]], position: dict[str, int], current: int
) -> tuple[float, int]:
    placed = [position[n] for n in neighbours[node] if n in position]
    return (sum(placed) / len(placed) if placed else float(current), current)


def _layers(nodes: Sequence[str], inputs: dict, outputs: dict) -> list[list[str]]:
    """The nodes by layer: each one layer after the deepest of its inputs."""
    layer: dict[str, int] = {}
    for node in _topological(nodes, inputs, outputs):
        layer[node] = max((layer[i] + 1 for i in inputs[node]), default=0)
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node in nodes:
        layers[layer[node]].append(node)
    return layers


def _topological(nodes: Sequence[str], inputs: dict, outputs: dict) -> list[str]:
    waiting = {n: len(inputs[n]) for n in nodes}
    ready = [n for n in nodes if waiting[n] == 0]
    order = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for target in outputs[node]:
            waiting[target] -= 1
            if waiting[target] == 0:
                ready.append(target)
    if len(order) != len(nodes):
        raise ValueError("the graph has a cycle")
    return order
