"""``kgp retrieve``, ``kgp router show`` and ``kgp router which`` (training and benches are lab commands)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import knowledge_platform

if TYPE_CHECKING:
    from kg_platform.sdk.results import Retrieval

ROUTER_HELP = "Inspect the MoG / MoGG routers: which one a corpus uses, and its weights."


def register(app: typer.Typer) -> None:
    app.command("retrieve")(retrieve)
    router = group(app, "router", ROUTER_HELP)
    router.command("show")(router_show)
    router.command("which")(router_which)


def retrieve(
    question: str = typer.Argument(..., help="the question text"),
    strategy: str | None = typer.Option(
        None,
        "--strategy",
        "-s",
        help="a registered strategy (default: KGP_RETRIEVE__STRATEGY, auto)",
    ),
    k: int | None = typer.Option(None, "--k", "-k", help="results to return (default: 5)"),
    budget_tokens: int | None = typer.Option(
        None,
        "--budget-tokens",
        min=1,
        help="return the ranking's first chunks within N tokens (the last one cut to fit) "
        "instead of --k: what fits a context window",
    ),
    select: str | None = typer.Option(
        None,
        "--select",
        help="post-processor: none | sage | late | auto (default: KGP_RETRIEVE__SELECT, auto = "
        "late with the bundled embedder)",
    ),
    explain: bool = typer.Option(False, "--explain", help="print breakdowns and a Browser query"),
    corpus: str | None = typer.Option(None, "--corpus", help="restrict to one corpus"),
    scope: list[str] = typer.Option(
        None,
        "--scope",
        help="only these documents: source id, title, path or file name (repeatable)",
    ),
    record: bool = typer.Option(
        False,
        "--record",
        help="store the ranking for the Browser guide's 'why was this chunk retrieved' query",
    ),
    as_json: bool = typer.Option(False, "--json", help="print results as JSON"),
) -> None:
    """Retrieve evidence for a question with one strategy (and optional SAGE selection)."""
    import logging

    from kg_platform.retrieval.explain import browser_snippet, explain_lines
    from kg_platform.retrieval.references_explain import reference_lines

    if explain:
        logging.getLogger("kg_platform.retrieval").setLevel(logging.INFO)
    with knowledge_platform() as kp:
        found = kp.search(
            question,
            strategy=strategy,
            k=k,
            select=select,
            corpus=corpus,
            scope=scope,
            record=record,
            max_tokens=budget_tokens,
        )
        references = reference_lines(kp.graph, found.items) if explain else []
    items = found.items
    if as_json:
        payload = found.to_dict()
        if explain:
            payload["browser"] = browser_snippet(items)
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    for rank, it in enumerate(items, 1):
        where = it.source_title or it.source_id or ""
        typer.echo(f"{rank}. [{it.score:.3f}] {where} ({it.kind} L{it.level}, {it.tokens} tok)")
        typer.echo("   " + " ".join((it.text or "").split())[:300])
    if found.answer_id:
        typer.echo(f"answer: MATCH (t:Trajectory {{id: '{found.answer_id}'}}) RETURN t")
    if explain:
        typer.echo(
            "\n".join(
                [
                    "",
                    f"explanation ({_strategy_line(found)}; selection {found.select}):",
                    *explain_lines(items),
                    *references,
                    "",
                    "Neo4j Browser (paste):",
                    browser_snippet(items),
                ]
            )
        )


def _strategy_line(found: "Retrieval") -> str:
    """``auto -> entity: the question names Sweetgrass`` for ``auto``, else the strategy."""
    if not found.ran or found.ran == found.strategy:
        return found.strategy
    return f"{found.strategy} -> {found.ran}" + (f": {found.why}" if found.why else "")


def router_show(
    corpus: str = typer.Option(..., "--corpus"), kind: str = typer.Option("mog", "--kind")
) -> None:
    """Print the newest router of a corpus and its metrics."""
    with knowledge_platform() as kp:
        corpus = kp.open_corpus(corpus)
        rows = kp.graph.read("retrieval/mog_router_latest", corpus=corpus, kind=kind)
    if not rows:
        typer.echo(
            f"no {kind} router trained for corpus {corpus!r}; it uses the default router "
            f"or the fixed level (see `kgp router which --corpus {corpus}`)"
        )
        raise typer.Exit(1)
    typer.echo(
        json.dumps(
            {
                "id": rows[0]["id"],
                "path": rows[0]["path"],
                "metrics": json.loads(rows[0]["metrics"] or "{}"),
            },
            indent=2,
        )
    )


def router_which(
    corpus: str = typer.Option(..., "--corpus"), as_json: bool = typer.Option(False, "--json")
) -> None:
    """Which MoG and MoGG router a corpus uses: its own, the default (shipped), or a fixed level."""
    from kg_platform.retrieval.strategies.router import router_for
    from kg_platform.retrieval.strategies.router import n_levels_for

    out = {}
    with knowledge_platform() as kp:
        corpus = kp.open_corpus(corpus)
        cfg = kp.settings.tuning.mog
        for kind in ("mog", "mogg"):
            router, source = router_for(
                kp.graph, kp.settings, corpus, kind, n_levels_for(kp.settings, kind)
            )
            out[kind] = {
                "source": source,
                "version": router.version if router else None,
                "path": str(router.path) if router else None,
                "trained_on": (router.meta.get("trained_on") if router else None),
                "fixed_level": None
                if router
                else (cfg.fixed_level if kind == "mog" else cfg.fixed_mogg_level),
            }
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    for kind, r in out.items():
        if r["source"] == "fixed":
            typer.echo(
                f"{kind}: fixed level {r['fixed_level']} (no router for {corpus!r}, "
                "default routers off or not matching)"
            )
        elif r["source"] == "default":
            typer.echo(
                f"{kind}: default router {r['version']} ({r['path']}), trained on "
                f"{', '.join(r['trained_on'] or [])}"
            )
        else:
            typer.echo(f"{kind}: corpus router {r['version']} ({r['path']})")
