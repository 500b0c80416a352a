"""``kgp corpus list|drop NAME``: see the corpora in the graph, delete one.

Both go through :class:`~kg_platform.sdk.platform.KnowledgePlatform` (``corpora``,
``drop_corpus``); errors (an unknown corpus, a corpus being ingested) reach ``kgp``'s error
handler, which prints the message and its hint and exits with 2.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import knowledge_platform

CORPUS_HELP = "The corpora in the graph: list them with their sizes, drop one."

COLUMNS = ("name", "sources", "sections", "chunks", "pieces")


def register(app: typer.Typer) -> None:
    sub = group(app, "corpus", CORPUS_HELP)
    sub.command("list")(list_corpora)
    sub.command("drop")(drop)


def _sizes(info: Any) -> str:
    return (
        f"{info.sources} sources, {info.sections} sections, {info.chunks} chunks, "
        f"{info.pieces} pieces"
    )


def list_corpora(
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Every corpus with its number of sources, sections, chunks (all levels) and pieces."""
    with knowledge_platform() as kp:
        infos = kp.corpora()
    if as_json:
        typer.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    if not infos:
        typer.echo("no corpus in the graph (`kgp ingest PATH --corpus NAME` makes one)")
        return
    rows = [[i.name, *(str(getattr(i, c)) for c in COLUMNS[1:])] for i in infos]
    widths = [max(len(c), *(len(r[n]) for r in rows)) for n, c in enumerate(COLUMNS)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(v.rjust(w) for v, w in zip(cells[1:], widths[1:]))])

    typer.echo(line(list(COLUMNS)))
    for row in rows:
        typer.echo(line(row))


def drop(
    name: str = typer.Argument(..., help="the corpus to delete (`kgp corpus list` shows them)"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
) -> None:
    """Delete a corpus and everything in it (asks first unless --yes).

    Goes: its sources with their sections, chunks, pieces and distilled facts, its run records
    and its trained routers."""
    with knowledge_platform() as kp:
        found = kp.corpora([name])
        if found and not yes:
            typer.confirm(
                f"Drop corpus {name!r} ({_sizes(found[0])})? This cannot be undone",
                abort=True,
            )
        dropped = kp.drop_corpus(name)  # an unknown name raises CorpusNotFound with its hint
    if found:
        info = found[0]
        typer.echo(
            f"dropped corpus {name!r}: {dropped} sources, {info.sections} sections, "
            f"{info.chunks} chunks, {info.pieces} pieces, its run records and routers"
        )
    else:  # appeared between the two calls
        typer.echo(f"dropped corpus {name!r}: {dropped} sources")
