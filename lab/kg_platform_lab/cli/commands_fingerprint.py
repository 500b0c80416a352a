"""``kgp lab graph-fingerprint``: a corpus's graph as counts and hashes, and the check that a
change to the write path left it the same."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("graph-fingerprint")(graph_fingerprint_cmd)


def graph_fingerprint_cmd(
    corpus: str = typer.Option(..., "--corpus", help="corpus to read"),
    out: Path | None = typer.Option(None, "--json", help="write the fingerprint to this file"),
    against: Path | None = typer.Option(
        None,
        "--against",
        exists=True,
        dir_okay=False,
        help="a fingerprint written before; exit 1 and list what differs when it does",
    ),
    float_digits: int | None = typer.Option(
        None, "--float-digits", min=0, help="round floats to this many decimals (default: exact)"
    ),
) -> None:
    """Count and hash every node and relationship of a corpus (times and run records left out).

    Typical use: ingest a folder into a scratch corpus, write ``--json before.json``, change the
    write path, drop and re-ingest the same folder under the same name, then run with
    ``--against before.json``.
    """
    from kg_platform.graph import GraphClient
    from kg_platform_lab.evaluation.fingerprint import Fingerprint, differences, fingerprint

    with GraphClient.from_settings() as graph:
        print_ = fingerprint(graph, corpus, float_digits=float_digits)
    if out is not None:
        out.write_text(json.dumps(print_.as_dict(), indent=2) + "\n", encoding="utf-8")
    summary = {
        "corpus": corpus,
        "digest": print_.digest,
        "nodes": sum(v["count"] for v in print_.nodes.values()),
        "relationships": sum(v["count"] for v in print_.relationships.values()),
    }
    typer.echo(json.dumps(summary))
    if against is not None:
        before = Fingerprint.from_dict(json.loads(against.read_text(encoding="utf-8")))
        lines = differences(before, print_)
        for line in lines:
            typer.echo(line, err=True)
        if lines:
            raise typer.Exit(1)
        typer.echo("same graph", err=True)
