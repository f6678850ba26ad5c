"""The ``tidal`` command line."""

from __future__ import annotations

import json
from enum import Enum

import typer
from rich.console import Console
from rich.table import Table

from jobmanager.logs import configure_logging

app = typer.Typer(
    name="tidal",
    help="Tidal: Flink's batch scheduling for Python, on Ray with PySpark.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def tidal() -> None:
    """Tidal: Flink's batch scheduling for Python, on Ray with PySpark."""


class Pattern(str, Enum):
    all_to_all = "all-to-all"
    pointwise = "pointwise"


class Result(str, Enum):
    blocking = "blocking"
    pipelined = "pipelined"


@app.command()
def stress(
    parallelism: int = typer.Option(10_000, min=1, help="Subtasks per vertex."),
    pattern: Pattern = typer.Option(Pattern.all_to_all, help="How consecutive vertices connect."),
    result: Result = typer.Option(Result.blocking, help="The result partition type of each edge."),
    vertices: int = typer.Option(2, min=2, help="Vertices in the chain."),
    slots_per_taskmanager: int = typer.Option(100, min=1, help="Slots per simulated TaskManager."),
    adaptive: bool = typer.Option(
        False, help="Leave downstream parallelisms to the adaptive scheduler (max: --parallelism)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object of the figures."),
) -> None:
    """Run the real scheduling core against simulated TaskManagers and report its cost."""
    from jobmanager.stress import run_stress

    configure_logging("WARNING")
    report = run_stress(
        parallelism, pattern.value, result.value, vertices, slots_per_taskmanager, adaptive
    )
    if as_json:
        typer.echo(json.dumps(report.as_json()))
        return
    console = Console()
    mode = " adaptive" if adaptive else ""
    table = Table(
        title=f"tidal stress: {vertices} x {parallelism} {pattern.value} {result.value}{mode} "
        f"(simulated TaskManagers) -> {report.status}"
    )
    table.add_column("phase")
    table.add_column("seconds", justify="right")
    table.add_column("peak traced MiB", justify="right")
    for phase, figures in report.phases.items():
        table.add_row(phase, f"{figures['seconds']:.3f}", f"{figures['peak_bytes'] / 2**20:.1f}")
    console.print(table)
    console.print(
        f"execution graph retains {report.execution_graph_retained_bytes / 2**20:.2f} MiB; "
        f"{report.tasks} tasks in {report.regions} regions; "
        f"total {sum(f['seconds'] for f in report.phases.values()):.2f} s"
    )
    for vertex, why in report.decisions.items():
        console.print(f"[bold]{vertex}[/bold] -> {report.parallelisms[vertex]}: {why}")


def main() -> None:
    app()
