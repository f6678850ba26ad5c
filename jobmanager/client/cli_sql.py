"""``tidal sql``: a query over Parquet or CSV tables, planned here, run on the cluster."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from jobmanager.client.cli_common import _client, _fail
from jobmanager.logs import configure_logging


def sql(
    query: str = typer.Argument(None, help="The query, in Spark's SQL dialect (or -f FILE)."),
    query_file: str = typer.Option(None, "-f", "--file", help="A file holding the query."),
    tables: list[str] = typer.Option([], "-t", "--table", help="A table, name=path; repeatable."),
    catalog: str = typer.Option(None, "--catalog", help="A YAML file of tables (name: path)."),
    output: str = typer.Option(
        None, "-o", "--output", help="Write the result here (Parquet) instead of printing it."
    ),
    overwrite: bool = typer.Option(False, help="Replace --output if it exists."),
    explain_only: bool = typer.Option(
        False, "--explain", help="Print the plan and stop: no cluster, nothing runs."
    ),
    rules: bool = typer.Option(
        False,
        "--rules",
        help="With --explain: each of the planner's rules in order, whether it changed the "
        "plan and how.",
    ),
    max_rows: int = typer.Option(100, "--max-rows", min=0, help="Print at most this many rows."),
    properties: list[str] = typer.Option([], "-D", help="An option, key=value; repeatable."),
    config_file: str = typer.Option(None, "--config", help="A YAML file of options."),
    address: str = typer.Option(None, help="A running Ray cluster; default: join or start local."),
    dashboard: bool = typer.Option(
        True, help="A cluster this command starts has Ray's dashboard (0.7 s, 200 MB)."
    ),
) -> None:
    """Run a SQL query over Parquet or CSV tables and print its result (or write it, -o)."""
    from jobmanager.client.query import plan_query
    from jobmanager.errors import TidalError
    from jobmanager.model.config import Configuration

    configure_logging("WARNING")
    text = _query_text(query, query_file)
    named = _table_pairs(tables)
    if rules and not explain_only:
        _fail("--rules shows how the plan was made: give --explain too")
    trace: list | None = [] if rules else None
    try:
        settings = Configuration.from_yaml(config_file) if config_file else Configuration()
        settings = settings.with_dynamic_properties(properties)
        planned, where = plan_query(
            text,
            settings,
            tables=named,
            catalog=catalog,
            output=output,
            overwrite=overwrite,
            rule_trace=trace,
        )
    except TidalError as error:
        _fail(str(error))
    if explain_only:
        if trace is not None:
            from jobmanager.planner.rules import explain_steps

            typer.echo(explain_steps(trace))
        typer.echo(f"result columns: {', '.join(planned.columns)}\n")
        typer.echo(planned.explain(), nl=False)
        return
    try:
        handle = _client(address, dashboard=dashboard)._submit(planned.graph, settings, where)
    except TidalError as error:
        _fail(str(error))
    _show_query_result(handle, max_rows)


def _query_text(query: str | None, query_file: str | None) -> str:
    """The query from the argument or from ``-f``, exactly one of them."""
    if (query is None) == (query_file is None):
        _fail("give the query, or -f FILE holding it (one of the two)")
    if query_file is None:
        return query
    try:
        with open(query_file, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        _fail(f"{query_file}: cannot read the query: {getattr(error, 'strerror', None) or error}")


def _table_pairs(pairs: list[str]) -> dict[str, str]:
    tables: dict[str, str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name.strip() or not path.strip():
            _fail(f"--table {pair}: expected name=path")
        tables[name.strip()] = path.strip()
    return tables


def _show_query_result(handle, max_rows: int) -> None:
    """Wait with progress; print the rows (at most ``max_rows``) or where they were written;
    exit code 1 if the job did not finish or its result cannot be read."""
    from jobmanager.client.progress import progress_for
    from jobmanager.errors import TidalError
    from jobmanager.logs import progress_logger

    typer.echo(f"submitted {handle.job_id}", err=True)
    result = handle.wait(progress=progress_for(True, transient=True, log=progress_logger()))
    if not result.succeeded:
        typer.echo(f"{result.status.value}: {result.cause}", err=True)
        raise typer.Exit(1)
    took = f"job {handle.job_id} in {result.duration_s:.1f} s (tidal explain {handle.job_id})"
    if not result.output.collected:
        rows = result.vertices["result"].rows_out if "result" in result.vertices else None
        count = "" if rows is None else f"{rows:,} rows "
        typer.echo(f"{count}written to {result.output.path}; {took}")
        return
    try:
        table = result.to_arrow()
    except TidalError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    Console().print(_rows_table(table, max_rows))
    shown = min(max_rows, table.num_rows)
    more = f", the first {shown:,} shown (--max-rows)" if shown < table.num_rows else ""
    typer.echo(f"{table.num_rows:,} rows{more}; {took}")


def _rows_table(table, max_rows: int) -> Table:
    """The first ``max_rows`` rows, column by column (two columns may share a name), values
    shown as text, never as rich markup."""
    from rich.text import Text

    rows = Table()
    for name in table.column_names:
        rows.add_column(Text(name), overflow="fold")
    shown = table.slice(0, max_rows)
    columns = [shown.column(i).to_pylist() for i in range(shown.num_columns)]
    for values in zip(*columns):
        rows.add_row(*(Text("NULL" if value is None else str(value)) for value in values))
    return rows
