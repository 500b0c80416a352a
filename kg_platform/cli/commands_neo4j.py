"""``kgp neo4j start|stop|status|logs|dump|load``: the local Neo4j 5.26 server."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kg_platform.cli.lazy import get_settings
from kg_platform.cli.lazy import LocalNeo4j

app = typer.Typer(
    help="Manage the local Neo4j 5.26 server (not used when NEO4J_URI is set).",
    no_args_is_help=True,
)


def _external_notice() -> bool:
    uri = get_settings().neo4j.uri
    if uri:
        typer.echo(
            f"NEO4J_URI is set ({uri}): the platform uses that server; nothing runs locally."
        )
        return True
    return False


@app.command()
def start(
    bolt_port: int = typer.Option(None, help="Bolt port (default from settings: 7687)"),
    http_port: int = typer.Option(None, help="HTTP/Browser port (default 7474)"),
    ephemeral: bool = typer.Option(False, help="temp data dir and free ports (tests)"),
) -> None:
    """Download (once) and start Neo4j on 127.0.0.1; wait until Bolt answers."""
    if _external_notice():
        return
    server = LocalNeo4j(ephemeral=ephemeral, bolt_port=bolt_port, http_port=http_port)
    status = server.start()
    typer.echo(f"Neo4j {status.version} running (pid {status.pid})")
    typer.echo(f"  Bolt:    {status.bolt_uri}")
    typer.echo(f"  Browser: {status.browser_url}  (user neo4j, password in {server.password_file})")


@app.command()
def stop() -> None:
    """Stop the local server cleanly."""
    if _external_notice():
        return
    stopped = LocalNeo4j().stop()
    typer.echo("Neo4j stopped" if stopped else "Neo4j was not running")


@app.command()
def status(as_json: bool = typer.Option(False, "--json", help="machine-readable output")) -> None:
    """Is the local server running, where, and which version."""
    st = LocalNeo4j().status()
    if as_json:
        typer.echo(st.to_json())
        return
    if not st.running:
        typer.echo(f"Neo4j is not running (home {st.home})")
        raise typer.Exit(1)
    typer.echo(
        f"Neo4j {st.version} running (pid {st.pid})\n  Bolt:    {st.bolt_uri}\n"
        f"  Browser: {st.browser_url}\n  Log:     {st.log_file}"
    )


@app.command()
def logs(lines: int = typer.Option(50, "-n", help="number of lines")) -> None:
    """Print the end of the server log."""
    typer.echo(LocalNeo4j().logs(lines))


@app.command()
def password() -> None:
    """Print the generated password of user neo4j (for Neo4j Browser)."""
    typer.echo(LocalNeo4j().password())


@app.command()
def dump(path: Path = typer.Argument(..., help="dump file to write, e.g. backups/kg.dump")) -> None:
    """Back up the local database to a file (the server is stopped and restarted around it)."""
    if _external_notice():
        raise typer.Exit(2)
    from kg_platform.neo4j_server.backup import dump_database

    out = dump_database(LocalNeo4j(), path)
    typer.echo(f"dumped database neo4j to {out} ({out.stat().st_size} bytes)")


@app.command()
def load(path: Path = typer.Argument(..., help="a file written by `kgp neo4j dump`")) -> None:
    """Replace the local database with a dump (the server is stopped and restarted around it)."""
    if _external_notice():
        raise typer.Exit(2)
    from kg_platform.neo4j_server.backup import load_database

    load_database(LocalNeo4j(), path)
    typer.echo(f"loaded {path} into database neo4j")


def status_json() -> dict:
    return json.loads(LocalNeo4j().status().to_json())
