"""``kgp distill`` (the distilled-knowledge layer, later or again) and ``kgp llm check``."""

from __future__ import annotations

import json

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import get_settings

LLM_HELP = "The configured LLM endpoint: check it, inspect its cache, run a local one."


def register(app: typer.Typer) -> None:
    app.command("distill")(distill)
    group(app, "llm", LLM_HELP).command("check")(check)


def distill(
    corpus: str = typer.Option(None, "--corpus", "-c", help="corpus name (default: settings)"),
    steps: str = typer.Option(
        None, "--steps", help="comma-separated: atomic,entities,tags (default: settings)"
    ),
    extractor: str = typer.Option(
        None,
        "--extractor",
        help="who extracts entities/relations: nlp (spaCy, no LLM), llm, or auto (default: "
        "settings; auto = llm when one is configured, else nlp)",
    ),
    relations: bool = typer.Option(
        None,
        "--relations/--no-relations",
        help="NLP extractor: also parse for noun-phrase concepts and RELATES relations "
        "(--relations), or named entities and titles only (--no-relations); default: "
        "distill.relations. Switching redoes every chunk's entities",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Distil the corpus's chunks: atomic questions, entities/relations, tags (LLM), or
    entities/relations from spaCy with `--extractor nlp` (no LLM).

    Resumable: chunks already done at the current prompt version are skipped and every reply is
    cached, so an interrupted run continues and a repeated run costs nothing."""
    from kg_platform.sdk.platform import KnowledgePlatform

    echo = (lambda _m: None) if as_json else typer.echo
    from kg_platform.errors import JobLocked

    from kg_platform.cli.signals import Terminated, exit_terminated, sigterm_as_interrupt

    settings = get_settings()
    if relations is not None:
        distill_cfg = settings.distill.model_copy(update={"relations": relations})
        settings = settings.model_copy(update={"distill": distill_cfg})
    try:
        with sigterm_as_interrupt(), KnowledgePlatform(settings) as kp:
            report = kp.distill(corpus, steps, echo=echo, extractor=extractor)
    except Terminated as exc:
        exit_terminated(
            exc,
            "distilled chunks are kept and replies cached: run the same command again to go on",
        )
    except JobLocked as exc:
        # exit 3 like a locked `kgp jobs run`: "not run", which a scheduler must tell from a
        # failure; the running distillation covers the same pending chunks
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "corpus": corpus or get_settings().corpus,
                        "status": "locked",
                        "reason": exc.args[0],
                        "exit_code": 3,
                    }
                )
            )
        typer.secho(f"skipped: {exc}", fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(3) from None
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    if report.skipped:
        return
    if report.extractor == "nlp" and not report.usage:
        return  # the NLP step echoed its own line; no LLM was used
    u = report.usage
    per_k = report.tokens_per_1k_corpus_tokens
    typer.echo(
        f"LLM: {u.get('calls', 0)} calls, {u.get('cache_hits', 0)} cached, "
        f"{u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion "
        f"tokens, ${u.get('cost_usd', 0.0):.4f}"
        + (f"; {per_k} LLM tokens per 1k corpus tokens" if per_k is not None else "")
        + f"; {report.duration_s:.1f}s"
    )
    if report.failed:
        typer.secho(
            f"{report.failed} chunks had unusable LLM output; re-run `kgp distill` to retry them",
            fg=typer.colors.YELLOW,
        )


def check(
    failures: bool = typer.Option(
        False, "--failures", help="also list recent invalid structured outputs"
    ),
) -> None:
    """Send one tiny uncached request to the configured LLM and report latency and tokens."""
    from kg_platform.llm import get_llm

    settings = get_settings()
    llm = get_llm(settings)
    if llm is None:
        typer.echo(
            "no LLM configured: set KGP_LLM__BASE_URL and KGP_LLM__MODEL "
            "(and KGP_LLM__API_KEY for hosted APIs); ingestion and retrieval work "
            "without one, and `kgp ask` returns evidence sentences."
        )
        raise typer.Exit(1)
    with llm:
        info = llm.check()
        typer.echo(json.dumps(info, indent=2))
        if failures and llm.cache is not None:
            for f in llm.cache.failures(limit=20):
                typer.echo(
                    f"{f['prompt']}@{f['version']} ({f['model']}): {f['error']}\n"
                    f"  reply: {f['reply'][:200]!r}"
                )
