"""``kgp references``: the REFERENCES edges between sources that name each other's titles."""

from __future__ import annotations

import json

import typer

from kg_platform.cli.lazy import knowledge_platform

REFERENCES_HELP = (
    "REFERENCES edges (a source whose text names another source's title): rebuild them."
)


def register_references(app: typer.Typer) -> None:
    from kg_platform.cli.groups import group

    sub = group(app, "references", REFERENCES_HELP)
    sub.command("rebuild")(references_rebuild)


def references_rebuild(
    corpus: str | None = typer.Option(None, "--corpus", help="default: settings.corpus"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Build the corpus' REFERENCES edges in full: every text against every title.

    Ingestion keeps them up to date by itself (new passages naming existing titles, existing
    passages naming new ones); run this for a corpus ingested before they existed.
    """
    with knowledge_platform() as kp:
        done = kp.rebuild_references(corpus)
    if as_json:
        typer.echo(json.dumps(done.__dict__, default=str))
        return
    if done.skipped:
        typer.echo("another references sync of this corpus held its lock; try again later")
        raise typer.Exit(1)
    per = done.edges / done.sources if done.sources else 0.0
    typer.echo(
        f"rebuilt: {done.sources} sources, {done.edges} REFERENCES edges ({per:.2f} per source; "
        f"+{done.added} / -{done.removed} / {done.updated} re-counted) in {done.seconds:.1f}s"
    )
