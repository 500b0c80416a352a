"""The evaluation run: corpus ready -> every question through every strategy -> scores.

One :func:`run_evaluation` call is one ``kgp lab eval``. The graph, the embedder and the settings come
in from the caller (CLI, SDK, notebook, tests), so the harness has no hidden connection of its own.

What is timed: ``strategy.retrieve`` (query embedding included) plus the optional selection
post-processor, per question, with ``time.perf_counter``. Not timed: ingestion, one unmeasured
warm-up query per strategy (model load, Cypher plan cache), scoring.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_platform.errors import EvaluationError, KGPError
from kg_platform_lab.evaluation.datasets import QAExample, dataset_name, load_dataset
from kg_platform_lab.evaluation.docqa import DocQuestion, is_docqa_folder, load_docqa
from kg_platform_lab.evaluation.metrics import (
    QuestionScore,
    Ranked,
    aggregate,
    cut_at_budget,
    cut_at_k,
    dedupe,
    score_question,
)
from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, get_strategy
from kg_platform.retrieval.pipeline import retrieve
from kg_platform.retrieval.rerank.selection import candidates_needed, resolve_selection
from kg_platform_lab.queries import lab_read

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder
    from kg_platform.graph import GraphClient

log = logging.getLogger(__name__)

BASELINE_LEVEL = 2
MAX_FETCH_K = 100
TOKENS_PER_ITEM_FLOOR = 16  # budget mode asks for budget/16 items: enough to fill it with pieces
CURVE_POINTS = 8
SCOPES = ("document", "corpus")


@lru_cache(maxsize=200_000)
def _tokens(text: str) -> int:
    from kg_platform.tokens import count_tokens

    return count_tokens(text)


def _truncate(text: str, n: int) -> str:
    from kg_platform.tokens import truncate_tokens

    return truncate_tokens(text, n)


@dataclass
class EvalConfig:
    """What ``kgp lab eval`` was asked to do."""

    dataset: Path
    strategies: list[str]
    k: int = 5
    budget_tokens: int | None = None
    limit: int | None = None
    corpus: str | None = None  # default: qa-<dataset file stem>
    corpus_limit: int | None = None  # ingest only the first N questions' paragraphs (tests)
    ingest: bool = True  # False: score the corpus as it is in the graph
    select: str | None = None  # post-processor from kg_platform.retrieval.rerank.selection
    fetch_k: int | None = None  # items asked from a strategy (default: see fetch_size)
    scope: str | None = None  # document QA: 'document' (default) or 'corpus'
    #: a file of question or document ids seen in training (routers, fitted weights): those
    #: questions are left out, so the numbers are for questions nothing was fitted on
    held_out: Path | None = None
    #: a passage JSONL (bench/distractors/) added to the pooled corpus, without the passages
    #: already in it; the default corpus is then qa-<dataset>+<distractor file stem>
    distractors: Path | None = None

    @property
    def document_qa(self) -> bool:
        """A folder in the document-QA layout (papers/ + questions.jsonl), not a QA file."""
        return is_docqa_folder(self.dataset)

    def __post_init__(self) -> None:
        self.dataset = Path(self.dataset)
        if self.document_qa:
            self.scope = self.scope or "document"
            if self.scope not in SCOPES:
                raise EvaluationError(
                    f"--scope must be one of {', '.join(SCOPES)}, got {self.scope!r}"
                )
            if self.corpus is None:
                self.corpus = f"doc-{self.dataset.resolve().name}"
        elif self.scope not in (None, "corpus"):
            raise EvaluationError(
                f"scope {self.scope!r} needs a document-QA folder (papers/ + questions.jsonl)",
                hint="QA files are one pooled corpus: leave the scope unset, or evaluate a "
                "document-QA folder such as bench/longdoc",
            )
        if not self.strategies:
            raise EvaluationError(
                "no strategy given", hint="name at least one, e.g. bm25,vector,hybrid"
            )
        if self.k < 1:
            raise EvaluationError(f"--k must be >= 1, got {self.k}")
        if self.budget_tokens is not None and self.budget_tokens < 1:
            raise EvaluationError(f"--budget-tokens must be >= 1, got {self.budget_tokens}")
        if self.distractors is not None:
            self.distractors = Path(self.distractors)
            if self.document_qa:
                raise EvaluationError(
                    "--distractors adds passages to a pooled QA corpus, not to a document-QA "
                    "folder",
                    hint="evaluate a QA file (bench/dev/*.jsonl) with --distractors",
                )
        if self.corpus is None:
            self.corpus = f"qa-{dataset_name(self.dataset)}"
            if self.distractors is not None:
                self.corpus += f"+{self.distractors.stem}"

    def fetch_size(self) -> int:
        """Items requested from a strategy before selection, dedup and the cut."""
        return self.fetch_k or items_to_fetch(self.k, self.budget_tokens)


def items_to_fetch(k: int, budget_tokens: int | None) -> int:
    """Items to ask a strategy for: k, or enough to fill the budget with piece-sized items."""
    if budget_tokens:
        return min(MAX_FETCH_K, max(k, -(-budget_tokens // TOKENS_PER_ITEM_FLOOR)))
    return k


@dataclass
class StrategyRun:
    """Everything measured for one strategy."""

    name: str
    scores: list[QuestionScore] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    rankings: list[list[Ranked]] = field(default_factory=list)  # deduped, before the cut
    errors: list[str] = field(default_factory=list)
    router_levels: list[tuple[str, int]] = field(default_factory=list)  # mog/mogg: (source, g_r)
    #: what ran under this name when it is not a strategy's own: ``default`` -> "hybrid + auto"
    path: str | None = None
    #: QA files: each question scored on the ranking's first PASSAGES_AT passages, read whole
    passage_scores: list[QuestionScore] = field(default_factory=list)


#: The run name that evaluates what a user gets with no flags: the settings' default strategy
#: with the settings' default selection (``retrieve.strategy`` + ``retrieve.select``).
DEFAULT_PATH = "default"


def path_of(name: str, cfg: EvalConfig, settings: "Settings") -> tuple[str, EvalConfig]:
    """The strategy and the configuration run under ``name``: a strategy's own name runs with
    ``--select`` as given; ``default`` runs exactly the default path of ``kgp retrieve``, the
    SDK and ``kgp ask``'s search, whatever ``--select`` says."""
    if name != DEFAULT_PATH:
        return name, cfg
    defaults = settings.retrieve
    return defaults.strategy, replace(cfg, select=defaults.select)


Example = QAExample | DocQuestion


def score_example(ex: Example, ranking: list[Ranked]) -> QuestionScore:
    """Gold-fact scoring for QA files, evidence-paragraph scoring for document QA."""
    if isinstance(ex, DocQuestion):
        return ex.score(ranking, _tokens)
    return score_question(ranking, ex.gold, _tokens)


@dataclass
class EvalResult:
    config: EvalConfig
    examples: list[Example]  # scored questions (non-empty gold)
    skipped: int  # questions without gold
    runs: dict[str, StrategyRun]
    corpus_chunks: int
    ingest: dict[str, Any] | None
    wall_s: float
    missing_documents: int = 0  # document QA: questions whose document is not ingested
    excluded_trained: int = 0  # questions left out by ``EvalConfig.held_out``

    def to_json(self) -> dict[str, Any]:
        """The stable report (keys are only ever added, never renamed)."""
        from kg_platform_lab.evaluation.report import report_json

        return report_json(
            self, {name: curve(run, self.examples, self.config) for name, run in self.runs.items()}
        )


# ------------------------------------------------------------------------------ corpus
def ensure_corpus(
    graph: "GraphClient", settings: "Settings", cfg: EvalConfig, embedder: "Embedder | None" = None
) -> dict[str, Any] | None:
    """Ingest the dataset's pooled corpus unless told not to; unchanged paragraphs are skipped
    by the ingestion itself, so a second run only pays for the hash check."""
    if not cfg.ingest:
        return None
    try:
        qa = importlib.import_module("kg_platform_lab.qa_ingest")
    except ModuleNotFoundError as exc:
        if exc.name not in ("kg_platform.ingest", "kg_platform_lab.qa_ingest"):
            raise
        raise EvaluationError(
            "kgp lab eval ingests the dataset through kg_platform_lab.qa_ingest, which is not installed "
            "in this build",
            hint="ingest the corpus another way, then evaluate it without ingesting "
            "(EvalConfig ingest=False with its corpus name)",
        ) from exc
    kwargs: dict[str, Any] = {"embedder": embedder} if embedder is not None else {}
    if cfg.distractors is not None:
        kwargs["distractors"] = cfg.distractors
    report = qa.ingest_qa(
        graph, settings, cfg.dataset, cfg.corpus, limit=cfg.corpus_limit, **kwargs
    )
    status = getattr(report, "status", "completed")
    if status == "failed":
        raise EvaluationError(
            f"ingesting {cfg.dataset} into corpus {cfg.corpus!r} failed: "
            f"{getattr(report, 'fatal', '')}",
            hint=f"ingest {cfg.dataset} into {cfg.corpus!r} on its own (KnowledgePlatform."
            "ingest_qa, `kgp lab ingest-qa`) to see every file's error",
        )
    return {
        "run_id": getattr(report, "run_id", None),
        "status": status,
        "added": len(getattr(report, "added", []) or []),
        "replaced": len(getattr(report, "replaced", []) or []),
        "skipped": len(getattr(report, "skipped", []) or []),
        "errors": len(getattr(report, "errors", []) or []),
        "duration_s": getattr(report, "duration_s", None),
    }


def ensure_documents(
    graph: "GraphClient", settings: "Settings", cfg: EvalConfig, embedder: "Embedder | None" = None
) -> dict[str, Any] | None:
    """Ingest a document-QA folder's documents through the normal document path (sections, MoG
    levels, pieces), as ``kgp ingest <folder>/papers`` would; unchanged files are skipped."""
    if not cfg.ingest:
        return None
    from kg_platform.ingest import ingest_paths

    assert cfg.corpus is not None
    folder = Path(cfg.dataset).resolve() / "papers"
    report = ingest_paths(graph, settings, [folder], cfg.corpus, embedder=embedder)
    if report.status == "failed":
        raise EvaluationError(
            f"ingesting {folder} into corpus {cfg.corpus!r} failed: {report.fatal}",
            hint=f"run `kgp ingest {folder} --corpus {cfg.corpus}` to see the details",
        )
    return {
        "run_id": report.run_id,
        "status": report.status,
        "added": len(report.added),
        "replaced": len(report.replaced),
        "skipped": len(report.skipped),
        "errors": len(report.errors),
        "duration_s": report.duration_s,
    }


def document_sources(
    graph: "GraphClient", corpus: str, examples: list[DocQuestion]
) -> dict[str, list[str]]:
    """doc_id -> source ids of that document in ``corpus`` (absent when not ingested)."""
    paths = sorted({str(ex.document.resolve()) for ex in examples})
    rows = graph.read("retrieval/scope_sources", values=paths, corpus=corpus)
    by_path = {r["value"]: list(r["ids"]) for r in rows}
    return {
        ex.doc_id: by_path[str(ex.document.resolve())]
        for ex in examples
        if by_path.get(str(ex.document.resolve()))
    }


def load_examples(
    dataset: Path, *, document_qa: bool, limit: int | None = None
) -> tuple[list[Any], list[Any]]:
    """(every question of ``dataset``, those with gold to score): gold evidence paragraphs for a
    document-QA folder, gold supporting paragraphs for a QA file."""
    if document_qa:
        docs = load_docqa(dataset, limit=limit)
        return list(docs), [ex for ex in docs if ex.evidence_sets]
    qas = load_dataset(dataset, limit=limit)
    return list(qas), [ex for ex in qas if ex.gold]


def scope_examples(
    graph: "GraphClient", corpus: str, examples: list[DocQuestion]
) -> tuple[list[DocQuestion], dict[str, list[str]]]:
    """The document questions whose paper is in ``corpus``, and per paper its source ids (the
    scope each question is retrieved in)."""
    scopes = document_sources(graph, corpus, examples)
    return [ex for ex in examples if ex.doc_id in scopes], scopes


def corpus_chunks(graph: "GraphClient", corpus: str, level: int = BASELINE_LEVEL) -> int:
    rows = lab_read(graph, "evaluation/corpus_chunks", corpus=corpus, level=level)
    return int(rows[0]["chunks"]) if rows else 0


# ----------------------------------------------------------------------------- selection
# ------------------------------------------------------------------------------- scoring
#: The cut published multi-hop retrieval figures use (recall@5, e.g. HippoRAG 2's tables): the
#: first five distinct passages of a ranking, each counted whole. Reported beside the token
#: budget's figures as ``recall_at_5_passages`` / ``all_found_at_5_passages``.
PASSAGES_AT = 5


def first_passages(items: list[RetrievedItem], n: int = PASSAGES_AT) -> list[str]:
    """The first ``n`` distinct passages (source ids) of a ranking, in rank order."""
    out: list[str] = []
    for it in items:
        sid = it.source_id or it.id
        if sid not in out:
            out.append(sid)
            if len(out) == n:
                break
    return out


def passage_ranking(
    graph: "GraphClient", items: list[RetrievedItem], cache: dict[str, str]
) -> list[Ranked]:
    """The ranking's first PASSAGES_AT passages as whole texts (read once per passage)."""
    ids = first_passages(items)
    missing = [sid for sid in ids if sid not in cache]
    if missing:
        for row in graph.read("ingest/references_texts", ids=missing):
            cache[row["id"]] = "\n".join(t or "" for t in row["texts"])
    return [Ranked(sid, cache.get(sid, "")) for sid in ids]


def to_ranking(items: list[RetrievedItem]) -> list[Ranked]:
    """A strategy's items as the scorer sees them: ids and texts, duplicates dropped."""
    return dedupe([Ranked(it.id, it.text) for it in items])


def cut_at(ranking: list[Ranked], k: int, budget: int | None) -> list[Ranked]:
    """The prefix within ``budget`` tokens when a budget is set, else the first ``k``."""
    return cut_at_budget(ranking, budget, _tokens, _truncate) if budget else cut_at_k(ranking, k)


def cut(
    ranking: list[Ranked], cfg: EvalConfig, k: int | None = None, budget: int | None = None
) -> list[Ranked]:
    """Cut at the budget when one is set, else at k (with ``--select``: as selected)."""
    from kg_platform.retrieval.rerank.selection import decides_count

    budget = budget if budget is not None else cfg.budget_tokens
    if not budget and k is None and decides_count(cfg.select):
        return list(ranking)  # the selection (SAGE's cut) decides how many items to keep
    return cut_at(ranking, k or cfg.k, budget)


def ranking_score(
    items: list[RetrievedItem], gold: Any, *, k: int = 5, budget: int | None = None
) -> QuestionScore:
    """Score one strategy answer as ``kgp lab eval`` does: dedupe, cut at the budget (else at k)."""
    return score_question(cut_at(to_ranking(items), k, budget), gold, _tokens)


def curve(run: StrategyRun, examples: list[Example], cfg: EvalConfig) -> list[dict[str, float]]:
    """Recall against context tokens at growing cuts (k = 1..k, or budget/8 .. budget)."""
    if cfg.budget_tokens:
        cuts = sorted(
            {max(1, cfg.budget_tokens * i // CURVE_POINTS) for i in range(1, CURVE_POINTS + 1)}
        )
        kw = "budget"
    else:
        cuts = list(range(1, cfg.k + 1))
        kw = "k"
    points = []
    for c in cuts:
        scores = [
            score_example(ex, cut(r, cfg, **{kw: c})) for r, ex in zip(run.rankings, examples)
        ]
        agg = aggregate(scores, [])
        point = {
            "cut": c,
            "sentence_recall": agg["sentence_recall"],
            "paragraph_recall": agg["paragraph_recall"],
            "context_tokens": agg["context_tokens"],
        }
        if "evidence_recall" in agg:
            point["evidence_recall"] = agg["evidence_recall"]
            point["evidence_token_coverage"] = agg["evidence_token_coverage"]
        points.append(point)
    return points


# ----------------------------------------------------------------------------------- run
def run_evaluation(
    cfg: EvalConfig,
    graph: "GraphClient",
    embedder: "Embedder",
    settings: "Settings",
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> EvalResult:
    """Ingest (unless disabled), then score every strategy on every question with gold."""
    started = time.perf_counter()
    # read first: a bad id list must fail before a long ingestion, not after it
    trained = read_id_list(cfg.held_out) if cfg.held_out is not None else None
    all_examples, examples = load_examples(
        Path(cfg.dataset), document_qa=cfg.document_qa, limit=cfg.limit
    )
    scopes: dict[str, list[str]] = {}
    missing = 0
    if cfg.document_qa:
        ingest_stats = ensure_documents(graph, settings, cfg, embedder)
        assert cfg.corpus is not None
        present, scopes = scope_examples(graph, cfg.corpus, examples)
        missing = len(examples) - len(present)
        if missing:
            log.warning(
                "%d questions skipped: their document is not in corpus %r (drop "
                "--no-ingest to ingest it)",
                missing,
                cfg.corpus,
            )
        examples = present
    else:
        ingest_stats = ensure_corpus(graph, settings, cfg, embedder)
    skipped = len(all_examples) - len(examples) - missing
    excluded = 0
    if trained is not None:
        kept = [ex for ex in examples if not _seen_in_training(ex, trained)]
        excluded = len(examples) - len(kept)
        examples = kept
    assert cfg.corpus is not None
    chunks = corpus_chunks(graph, cfg.corpus)
    if chunks == 0:
        what = Path(cfg.dataset) / "papers" if cfg.document_qa else cfg.dataset
        raise EvaluationError(
            f"corpus {cfg.corpus!r} has no level-{BASELINE_LEVEL} chunks to retrieve from",
            hint=f"ingest {what} into {cfg.corpus!r} first, or let the evaluation ingest it "
            "(EvalConfig ingest=True, the default)",
        )
    scoped = cfg.document_qa and cfg.scope == "document"
    ctx = RetrievalContext(
        graph=graph,
        embedder=embedder,
        settings=settings,
        corpus=cfg.corpus,
        sources=next(iter(scopes.values()), None) if scoped else None,
    )
    runs: dict[str, StrategyRun] = {}
    passages: dict[str, str] = {}  # source id -> its whole text, for the passage cut
    for name in cfg.strategies:
        strategy_name, run_cfg = path_of(name, cfg, settings)
        fetch = _fetch_depth(run_cfg, ctx)
        strategy = get_strategy(strategy_name, ctx)
        run = StrategyRun(name)
        if name != strategy_name:
            run.path = f"{strategy_name} + {run_cfg.select or 'none'}"
        if examples:  # warm-up: model load and query planning are not retrieval latency
            try:
                _retrieve(strategy, run_cfg, ctx, examples[0].question, fetch)
            except KGPError:
                pass  # recorded below when the same question is scored
        for i, ex in enumerate(examples):
            if scoped:
                ctx.sources = scopes[ex.doc_id]
            t0 = time.perf_counter()
            try:
                items = _retrieve(strategy, run_cfg, ctx, ex.question, fetch)
            except KGPError as exc:  # one failing question must not hide the other 99
                log.warning("%s failed on %s: %s", name, ex.id, exc)
                run.errors.append(f"{ex.id}: {exc}")
                items = []
            run.latencies_ms.append((time.perf_counter() - t0) * 1000.0)
            plans = getattr(strategy, "last_plans", None)
            if plans:  # MoG / MoGG: which router chose which level for this question
                run.router_levels.append((plans[0].router_source, plans[0].g_r))
            ranking = to_ranking(items)
            run.rankings.append(ranking)
            run.scores.append(score_example(ex, cut(ranking, run_cfg)))
            if not cfg.document_qa:
                run.passage_scores.append(
                    score_example(ex, passage_ranking(graph, items, passages))
                )
            if progress:
                progress(name, i + 1, len(examples))
        runs[name] = run
    return EvalResult(
        config=cfg,
        examples=examples,
        skipped=skipped,
        runs=runs,
        corpus_chunks=chunks,
        ingest=ingest_stats,
        wall_s=time.perf_counter() - started,
        missing_documents=missing,
        excluded_trained=excluded,
    )


def read_id_list(path: Path) -> set[str]:
    """Ids in a text file, one per line; blank lines and ``#`` comments ignored."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationError(
            f"cannot read the --held-out id list {path}: {exc.strerror or exc}",
            hint="pass a text file with one question or document id per line",
        ) from exc
    ids = {line.split("#", 1)[0].strip() for line in lines}
    ids.discard("")
    if not ids:
        raise EvaluationError(
            f"the --held-out id list {path} holds no ids",
            hint="one question id (or document id) per line; '#' starts a comment",
        )
    return ids


def _seen_in_training(ex: Any, trained: set[str]) -> bool:
    """A question counts as seen when its id, or its document's id, is listed."""
    return ex.id in trained or getattr(ex, "doc_id", None) in trained


def _fetch_depth(cfg: EvalConfig, ctx: RetrievalContext) -> int:
    """Deep enough for the token budget and for the selection's candidates; the pipeline then
    keeps the whole selected ranking (k = fetch), which the scorer cuts as configured."""
    fetch = cfg.fetch_size()
    if cfg.select:
        fetch = max(fetch, candidates_needed(resolve_selection(cfg.select, ctx), fetch, ctx))
    return fetch


def _retrieve(
    strategy: Any, cfg: EvalConfig, ctx: RetrievalContext, query: str, fetch: int
) -> list[RetrievedItem]:
    """One question through the product's retrieval pipeline, as a user's search runs it
    (unenriched: the scorer reads ids and texts only)."""
    return retrieve(ctx, query, strategy=strategy, k=fetch, select=cfg.select, enrich=False).items
