"""What the ``tidal`` commands share: a mistake as one line with exit code 2, and the client."""

from __future__ import annotations

from typing import NoReturn

import typer


def _fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _client(address: str | None, keep_running: bool = False, dashboard: bool = True):
    """The client, or one line saying why the cluster cannot be joined (exit code 2); a
    cluster it starts has Ray's dashboard unless ``dashboard`` is False."""
    from jobmanager.client.client import Client
    from jobmanager.client.connect import connect
    from jobmanager.errors import TidalError

    try:
        done = connect(address, keep_running=keep_running, dashboard=dashboard)
    except TidalError as error:
        _fail(str(error))
    if keep_running and done.startswith("started"):
        typer.echo(done)
    return Client(address, dashboard=dashboard)
