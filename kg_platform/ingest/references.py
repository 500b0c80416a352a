"""Keeps a corpus' ``(:Source)-[:REFERENCES]->(:Source)`` edges equal to the titles its texts name.

PIKE-RAG's information-resource layer links sources that refer to each other. In encyclopedic
corpora (one passage per article, titled) a passage whose text names another passage's title
refers to it: ``a -[:REFERENCES {mentions, by: 'title'}]-> b`` when a's finest-level chunks name
b's title (``ingest/title_match.py`` holds the matching rule; no LLM). An edge depends on its two
sources alone, so the graph is a function of the corpus's sources and:

- **Incremental** (after every ingestion run, like the piece graph). A source is *pending* when
  its content hash moved since its edges were computed (new or replaced: ``Source.refs_sha``),
  and its *title is new* when its title moved (``Source.refs_title``). Pending sources' outgoing
  edges are recomputed from their texts against every title of the corpus; a new title is looked
  for in the other sources' texts through the corpus's level-1 fulltext index (a phrase query
  proposes the chunks, the matcher decides). The cost of a run grows with what it adds.
- **Full** on the first sync of a corpus, when most sources are pending, when a phrase query was
  cut at its limit, or on demand (``kgp references rebuild``): every text against every title;
  it gives the same edges.
- Dropping or pruning a source deletes it with its edges (``DETACH DELETE``); a replaced source
  keeps its node, and the sync recomputes its edges.

Syncs of one corpus are serialised by a job lock (``references:<corpus>``). A source written
while a sync runs keeps its old marks (``references_mark`` checks the hash it read) and is picked
up by the next sync, its writer's own.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction

from kg_platform.graph.client import GraphClient
from kg_platform.graph.corpus_indexes import own_prefix
from kg_platform.graph.cypher import cypher
from kg_platform.graph.lucene import escape_lucene
from kg_platform.graph.lock import JobLock
from kg_platform.ingest.title_match import TitleMatcher, references, title_tokens

__all__ = ["ReferencesSync", "sync_references", "desired_references", "references_lock_name"]

#: A phrase query asks for at most this many chunks; a title named more often than that (over
#: every corpus sharing the index) makes the sync read every text instead.
PHRASE_LIMIT = 20_000
#: More pending sources than this share of the corpus: read every text (one pass is cheaper
#: than that many phrase queries).
FULL_SHARE = 0.5


@dataclass
class ReferencesSync:
    sources: int = 0
    edges: int = 0
    added: int = 0
    removed: int = 0
    updated: int = 0
    #: sources whose outgoing edges were recomputed / whose title was looked for
    pending: int = 0
    new_titles: int = 0
    mode: str = ""
    skipped: bool = False
    seconds: float = 0.0


def references_lock_name(corpus: str) -> str:
    return f"references:{corpus}"


def _texts(graph: GraphClient, ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    size = max(graph.batch_size, 1)
    for start in range(0, len(ids), size):
        for row in graph.read("ingest/references_texts", ids=ids[start : start + size]):
            out[row["id"]] = [t or "" for t in row["texts"]]
    return out


def desired_references(
    titles: dict[str, str], texts: dict[str, list[str]], *, min_chars: int = 4
) -> dict[tuple[str, str], int]:
    """Every edge a full build gives: (a, b) -> mentions, for sources ``titles`` (id -> title)
    whose texts are ``texts`` (id -> finest-level chunk texts)."""
    matcher = TitleMatcher(titles.items(), min_chars=min_chars)
    out: dict[tuple[str, str], int] = {}
    for sid, chunks in texts.items():
        for target, n in references(matcher, titles, sid, chunks).items():
            out[(sid, target)] = n
    return out


def _phrase(title: str) -> str:
    """The title's tokens as a Lucene phrase, or its possessive (Lucene keeps ``barrie's`` one
    token, which the matcher reads as naming ``Barrie``)."""
    words = [escape_lucene(t) for t in title_tokens(title)]
    plain = '"' + " ".join(words) + '"'
    if words[-1].endswith(("'s", "\u2019s")):
        return plain
    return " OR ".join(
        [plain] + ['"' + " ".join(words[:-1] + [words[-1] + s]) + '"' for s in ("'s", "\u2019s")]
    )


def _named_by(graph: GraphClient, corpus: str, rows: list[dict[str, str]]) -> tuple[set[str], bool]:
    """Sources whose chunks hold one of the new titles' phrases; True when an answer was cut."""
    found: set[str] = set()
    ix = own_prefix(graph, corpus)
    size = max(graph.batch_size, 1)
    for start in range(0, len(rows), size):
        for row in graph.read(
            "ingest/references_candidates",
            rows=rows[start : start + size],
            ix=ix,
            corpus=corpus,
            limit=PHRASE_LIMIT,
        ):
            if int(row["hits"]) >= PHRASE_LIMIT:
                return found, True
            found.update(s for s in row["sources"] if s)
    return found, False


def _edges(rows: Iterable[Any]) -> dict[tuple[str, str], int]:
    return {(r["a"], r["b"]): int(r["mentions"] or 0) for r in rows}


def sync_references(
    graph: GraphClient,
    corpus: str,
    *,
    force: bool = False,
    min_chars: int = 4,
    lock_timeout_s: float = 600.0,
    lease_s: float = 60.0,
) -> ReferencesSync:
    """Bring the corpus' REFERENCES edges up to date (``force``: a full build)."""
    started = time.perf_counter()
    lock = JobLock(graph, references_lock_name(corpus), lease_s=lease_s)
    if not lock.wait_acquire(lock_timeout_s):
        return ReferencesSync(skipped=True)
    try:
        done = _sync(graph, corpus, force=force, min_chars=min_chars)
    finally:
        lock.release()
    done.seconds = round(time.perf_counter() - started, 3)
    return done


def _sync(graph: GraphClient, corpus: str, *, force: bool, min_chars: int) -> ReferencesSync:
    rows = graph.read("ingest/references_sources", corpus=corpus)
    titles = {r["id"]: r["title"] for r in rows}
    pending = [r for r in rows if force or r["refs_sha"] is None or r["refs_sha"] != r["sha256"]]
    renamed = [r for r in rows if force or r["refs_title"] is None or r["refs_title"] != r["title"]]
    if not pending and not renamed:
        return ReferencesSync(sources=len(rows), skipped=True)
    pending_ids = {r["id"] for r in pending}
    never = all(r["refs_sha"] is None for r in rows)
    full = force or never or len(pending) > FULL_SHARE * len(rows)
    readers: set[str] = set()
    if not full:
        new = [
            {"id": r["id"], "q": _phrase(r["title"])}
            for r in renamed
            if TitleMatcher.eligible(r["title"], min_chars)
        ]
        readers, cut = _named_by(graph, corpus, new)
        full = cut
    if full:
        desired = desired_references(titles, _texts(graph, list(titles)), min_chars=min_chars)
        existing = _edges(graph.read("ingest/references_edges", corpus=corpus, sources=None))
        scope_out: set[str] | None = None
        scope_in: set[str] = set()
    else:
        # outgoing edges of the pending sources, against every title
        matcher = TitleMatcher(titles.items(), min_chars=min_chars)
        texts = _texts(graph, sorted(pending_ids | readers))
        desired = {}
        for sid in pending_ids:
            for target, n in references(matcher, titles, sid, texts.get(sid, [])).items():
                desired[(sid, target)] = n
        # edges reaching the renamed sources from the others, from the texts that hold their
        # phrase (a pending source's outgoing edges are already complete above)
        renamed_ids = {r["id"] for r in renamed}
        new_matcher = TitleMatcher(
            ((sid, titles[sid]) for sid in sorted(renamed_ids)), min_chars=min_chars
        )
        for sid in sorted(readers - pending_ids):
            for target, n in references(new_matcher, titles, sid, texts.get(sid, [])).items():
                desired[(sid, target)] = n
        existing = _edges(
            graph.read("ingest/references_edges", corpus=corpus, sources=sorted(pending_ids))
        )
        existing.update(_edges(graph.read("ingest/references_incoming", ids=sorted(renamed_ids))))
        scope_out = pending_ids
        scope_in = renamed_ids
    # an existing edge outside what this sync recomputed stays as it is
    remove = [
        {"a": a, "b": b}
        for (a, b) in existing
        if (a, b) not in desired
        and (scope_out is None or a in scope_out or b in scope_in)
        and b in titles
    ]
    upsert = [
        {"a": a, "b": b, "mentions": n}
        for (a, b), n in sorted(desired.items())
        if existing.get((a, b)) != n
    ]
    added = sum(1 for r in upsert if (r["a"], r["b"]) not in existing)
    marks = [
        {"id": r["id"], "sha256": r["sha256"], "title": r["title"]}
        for r in {r["id"]: r for r in pending + renamed}.values()
    ]
    size = max(graph.batch_size, 1)

    def work(tx: ManagedTransaction) -> None:
        for name, batch_rows in (
            ("ingest/references_delete", remove),
            ("ingest/references_merge", upsert),
            ("ingest/references_mark", marks),
        ):
            for start in range(0, len(batch_rows), size):
                tx.run(cypher(name), rows=batch_rows[start : start + size]).consume()

    graph.in_transaction(work)
    total = graph.read("ingest/references_count", corpus=corpus)
    return ReferencesSync(
        sources=len(rows),
        edges=int(total[0]["n"]) if total else 0,
        added=added,
        removed=len(remove),
        updated=len(upsert) - added,
        pending=len(pending),
        new_titles=len(renamed),
        mode="full" if full else "incremental",
    )
