"""The ``tidal`` command line."""

from __future__ import annotations

import json
import os
import time
from enum import Enum

import typer
from rich.console import Console
from rich.table import Table

from jobmanager.client.cli_common import _client, _fail
from jobmanager.client.cli_sql import sql
from jobmanager.logs import configure_logging
from jobmanager.messages.jobstatus import JobStatus

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
    on_ray: bool = typer.Option(
        False,
        "--on-ray",
        help="Run it for real on a Ray cluster (no-op Arrow tasks, real "
        "TaskManagers and partition files), local unless --address.",
    ),
    address: str = typer.Option(None, help="With --on-ray: the Ray cluster."),
) -> None:
    """Run the real scheduling core against simulated TaskManagers (or, --on-ray, run the job
    on a Ray cluster) and report its cost."""
    from jobmanager.simulation.stress import run_stress

    configure_logging("WARNING")
    if on_ray:
        _stress_on_ray(
            parallelism, pattern.value, result.value, vertices, adaptive, address, as_json
        )
        return
    report = run_stress(
        parallelism, pattern.value, result.value, vertices, slots_per_taskmanager, adaptive
    )
    if as_json:
        typer.echo(json.dumps(report.as_json()))
        if report.status != JobStatus.FINISHED:
            raise typer.Exit(1)
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
    if report.status != JobStatus.FINISHED:
        raise typer.Exit(1)


def _stress_on_ray(
    parallelism: int,
    pattern: str,
    result: str,
    vertices: int,
    adaptive: bool,
    address: str | None,
    as_json: bool,
) -> None:
    """Ctrl-C cancels the job and waits for it to end before leaving."""
    from jobmanager.client.stress_on_ray import run_on_ray

    submitted: list = []

    def said(handle) -> None:
        submitted.append(handle)
        typer.echo(f"stress job {handle.job_id} submitted; Ctrl-C cancels it", err=True)

    try:
        report = run_on_ray(
            parallelism, pattern, result, vertices, adaptive, address, on_submit=said
        )
    except KeyboardInterrupt:
        if submitted:
            typer.echo(f"cancelling {submitted[0].job_id} ...", err=True)
            submitted[0].cancel("tidal stress interrupted (Ctrl-C)")
            ended = submitted[0].wait(timeout=120)
            typer.echo(f"job {submitted[0].job_id}: {ended.status.value}", err=True)
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps(report))
    else:
        console = Console()
        table = Table(
            title=f"tidal stress --on-ray: {vertices} x {parallelism} {pattern} {result} "
            f"-> {report['status']}"
        )
        table.add_column("phase")
        table.add_column("seconds", justify="right")
        for phase, figures in report["phases"].items():
            table.add_row(phase, f"{figures['seconds']:.3f}")
        console.print(table)
        loop = report["jobmanager_loop"]
        console.print(
            f"{report['tasks']:,} tasks, {report['tasks_per_second']:,.0f} per second; "
            f"{report['subpartition_reads']:,} subpartition range reads; JobManager loop "
            f"{loop['median_ms']} ms median, {loop['p99_ms']} ms p99 over {loop['batches']:,} "
            f"batches; peak memory: JobManager {_mib(report['jobmanager_peak_rss_bytes'])}, "
            f"largest TaskManager {_mib(report['taskmanager_peak_rss_bytes'])}"
        )
    if report["status"] != JobStatus.FINISHED:
        raise typer.Exit(1)


def _mib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**20:.0f} MiB"


def _job(address: str | None, job_id: str):
    from jobmanager.errors import UnknownJobError

    try:
        return _client(address).job(job_id)
    except UnknownJobError as error:
        _fail(str(error))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    job_file: str = typer.Argument(
        ...,
        help="A job file (its build() returns a JobGraph), or "
        "a PySpark script, run unchanged with each action a job.",
    ),
    address: str = typer.Option(None, help="A running Ray cluster; default: join or start local."),
    config_file: str = typer.Option(None, "--config", help="A YAML file of options."),
    properties: list[str] = typer.Option([], "-D", help="An option, key=value; repeatable."),
    arguments: list[str] = typer.Option(
        [], "-a", "--arg", help="An argument of build(), key=value (a YAML scalar); repeatable."
    ),
    detach: bool = typer.Option(
        False, help="Submit and return; with no cluster running, start one that stays up."
    ),
    dashboard: bool = typer.Option(
        True, help="A cluster this command starts has Ray's dashboard (0.7 s, 200 MB)."
    ),
) -> None:
    """Submit a job and, unless detached, show its progress until it ends; or run a PySpark
    script (any file without build()), its own arguments after its name, each action a job."""
    from jobmanager.client.scripts import is_job_file

    if os.path.isfile(job_file) and not is_job_file(job_file):
        if detach or arguments:
            _fail("-a and --detach are for job files; a script takes its own arguments")
        from jobmanager.client.scripts import script_command

        configure_logging("WARNING")
        code = script_command(
            job_file,
            ctx.args,
            config_file,
            properties,
            lambda: _client(address, False, dashboard),
            _fail,
        )
        raise typer.Exit(code)
    if ctx.args:
        _fail(f"unexpected arguments {' '.join(ctx.args)}: a job file takes -a key=value")
    from jobmanager.client.jobfile import build_arguments, load_job
    from jobmanager.client.progress import progress_for, summary_table
    from jobmanager.errors import TidalError
    from jobmanager.logs import progress_logger
    from jobmanager.model.config import Configuration

    configure_logging("WARNING")
    try:
        job = load_job(job_file, build_arguments(arguments))
        settings = Configuration.from_yaml(config_file) if config_file else Configuration()
        settings = settings.with_dynamic_properties(properties)
        handle = _client(address, detach, dashboard).submit(job, config=settings.to_dict())
    except TidalError as error:
        _fail(str(error))
    except KeyboardInterrupt:  # in the job file's build(), say: not a mistake in it
        typer.echo("interrupted (Ctrl-C) before the job was submitted", err=True)
        raise typer.Exit(130) from None
    typer.echo(f"submitted {handle.job_id}")
    if detach:
        typer.echo(f"follow it with: tidal status {handle.job_id}")
        return
    result = handle.wait(progress=progress_for(True, transient=True, log=progress_logger()))
    final = handle.status()
    Console().print(summary_table(final, caption=_timing(final)))
    if not result.succeeded:
        typer.echo(f"{result.status.value}: {result.cause}", err=True)
        raise typer.Exit(1)


app.command()(sql)  # in cli_sql, listed after run as before


@app.command(name="list")
def list_jobs(address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """The jobs on the cluster, running and recently ended, oldest first."""
    configure_logging("WARNING")
    table = Table(title="tidal jobs")
    for column in ("job", "name", "status", "submitted", "duration", "vertices"):
        table.add_column(column, no_wrap=column in ("job", "status"), min_width=8)
    for job in _client(address).list():
        table.add_row(
            job.job_id,
            job.name,
            job.status.value,
            _when(job.submitted_at),
            _duration(job),
            str(job.vertices),
        )
    Console().print(table)


@app.command()
def status(job_id: str, address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """One job's status, per vertex, with the cause if it failed."""
    from jobmanager.client.progress import summary_table

    configure_logging("WARNING")
    current = _job(address, job_id).status()
    Console().print(summary_table(current, caption=_timing(current)))
    if current.cause:
        typer.echo(current.cause)


@app.command()
def cancel(job_id: str, address: str = typer.Option(None, help="The Ray cluster.")) -> None:
    """Cancel a running job (exit code 1 if it had already ended)."""
    configure_logging("WARNING")
    handle = _job(address, job_id)
    current = handle.status().status
    if current.is_terminal:
        typer.echo(f"job {job_id} has already ended ({current.value}): nothing to cancel", err=True)
        raise typer.Exit(1)
    handle.cancel()
    typer.echo(f"cancelling {job_id}")


@app.command()
def logs(
    job_id: str,
    vertex: str = typer.Option(None, help="Only this vertex: its lines and its TaskManagers."),
    address: str = typer.Option(None, help="The Ray cluster."),
) -> None:
    """A job's logs: its JobManager's, and each TaskManager's while it served the job (Tidal's
    log, the tasks' output and Spark's)."""
    from jobmanager.client.joblogs import render_logs

    configure_logging("WARNING")
    typer.echo(render_logs(_job(address, job_id).logs(), vertex), nl=False)


def _stored_job(job_id: str, properties: list[str]):
    """The facts of ``job_id`` from its store or archive (no cluster needed), or one line
    saying why not (exit code 2)."""
    from jobmanager.client.report import find_job, job_facts
    from jobmanager.errors import TidalError
    from jobmanager.model.config import Configuration

    try:
        config = Configuration().with_dynamic_properties(properties)
        return job_facts(find_job(job_id, config), job_id)
    except TidalError as error:
        _fail(str(error).strip("'\""))


_STORE_OPTION = typer.Option(
    [], "-D", help="jobstore.dir or jobmanager.archive.fs.dir, key=value, if the job used others."
)


@app.command()
def explain(job_id: str, properties: list[str] = _STORE_OPTION) -> None:
    """Each vertex's parallelism and the whole reason for it: the bytes it consumed, the raw
    value and every clamp, the tasks' ranges, skew splits, what its sources listed; for a
    running job, what undecided vertices wait for. Read from the job's event log."""
    from jobmanager.client.report import explain_lines

    configure_logging("WARNING")
    typer.echo("\n".join(explain_lines(_stored_job(job_id, properties))))


@app.command()
def report(
    job_id: str,
    output: str = typer.Option(None, "-o", "--output", help="The HTML file to write."),
    properties: list[str] = _STORE_OPTION,
) -> None:
    """Write one self-contained HTML file of the job: its graph, a timeline of every task
    attempt, bytes per subpartition with the decided ranges, and every vertex's explanation."""
    import os

    from jobmanager.client.report import report_file_name, report_html

    configure_logging("WARNING")
    facts = _stored_job(job_id, properties)
    path = os.path.abspath(output or report_file_name(facts))
    with open(path, "w", encoding="utf-8") as out:
        out.write(report_html(facts))
    typer.echo(f"report of {facts.name} ({job_id}, {facts.status}) written to {path}")


@app.command()
def history(
    limit: int = typer.Option(50, "-n", "--limit", min=1, help="Show this many, newest first."),
    properties: list[str] = _STORE_OPTION,
) -> None:
    """The jobs in the job history and stores, newest first, whether or not their cluster
    still runs; `tidal explain` and `tidal report` take any of their ids."""
    from jobmanager.client.report import history as job_history
    from jobmanager.errors import TidalError
    from jobmanager.model.config import Configuration

    configure_logging("WARNING")
    try:
        jobs = job_history(Configuration().with_dynamic_properties(properties))
    except TidalError as error:
        _fail(str(error))
    table = Table(
        title=f"tidal history: {len(jobs)} jobs"
        + (f", newest {limit}" if len(jobs) > limit else "")
    )
    for column in ("name", "job", "status", "submitted", "duration", "tasks"):
        table.add_column(column, no_wrap=column in ("job", "status", "submitted"))
    for job in jobs[:limit]:
        table.add_row(
            job.name,
            job.job_id,
            "not ended" if job.status is None else job.status.value,
            _when(job.submitted_at),
            _duration(job),
            "" if job.tasks is None else f"{job.tasks:,}",
        )
    Console().print(table)


def _when(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp)) if timestamp else ""


def _duration(job) -> str:
    """``job``: anything with ``submitted_at`` and ``ended_at`` (details, summary, history)."""
    if not job.submitted_at:
        return ""
    if job.ended_at:
        return f"{job.ended_at - job.submitted_at:.1f} s"
    return f"{time.time() - job.submitted_at:.1f} s so far"


def _timing(job) -> str:
    return f"submitted {_when(job.submitted_at)}, {_duration(job)}"


def main() -> None:
    app()
