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
    from jobmanager.simulation.stress import run_stress

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


def _client(address: str | None):
    from jobmanager.client.client import Client

    return Client(address)


@app.command()
def run(
    job_file: str = typer.Argument(..., help="A Python file whose build() returns a JobGraph."),
    address: str = typer.Option(None, help="A running Ray cluster; default: join or start local."),
    config_file: str = typer.Option(None, "--config", help="A YAML file of options."),
    properties: list[str] = typer.Option([], "-D", help="An option, key=value; repeatable."),
    detach: bool = typer.Option(False, help="Submit and return without waiting."),
) -> None:
    """Submit a job and, unless detached, show its progress until it ends."""
    import runpy

    from jobmanager.client.progress import summary_table
    from jobmanager.errors import TidalError

    configure_logging("WARNING")
    namespace = runpy.run_path(job_file, run_name="tidal_job")
    build = namespace.get("build")
    job = build() if callable(build) else namespace.get("job")
    if job is None:
        raise typer.BadParameter(f"{job_file} defines neither build() nor job", param_hint="JOB_FILE")
    try:
        handle = _client(address).submit(job, config_file=config_file, properties=properties)
    except TidalError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"submitted {handle.job_id}")
    if detach:
        return
    result = handle.wait(progress=True)
    Console().print(summary_table(handle.status()))
    if not result.succeeded:
        typer.echo(f"{result.status}: {result.cause}", err=True)
        raise typer.Exit(1)


@app.command(name="list")
def list_jobs(address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """The jobs on the cluster, running and recently ended."""
    configure_logging("WARNING")
    table = Table(title="tidal jobs")
    for column in ("job", "name", "status", "vertices"):
        table.add_column(column)
    for status in _client(address).list():
        table.add_row(status["job_id"], status["name"], status["status"], str(len(status["vertices"])))
    Console().print(table)


@app.command()
def status(job_id: str, address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """One job's status, per vertex, with the cause if it failed."""
    from jobmanager.client.progress import summary_table

    configure_logging("WARNING")
    try:
        current = _client(address).job(job_id).status()
    except LookupError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    Console().print(summary_table(current))
    if current["cause"]:
        typer.echo(current["cause"])


@app.command()
def cancel(job_id: str, address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """Cancel a running job."""
    configure_logging("WARNING")
    try:
        _client(address).job(job_id).cancel()
    except LookupError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"cancelling {job_id}")


def main() -> None:
    app()
