"""Auto-tagging (PIKE-RAG paper): bridging the gap between how users ask and how documents say it.

1. ``ensure_tag_classes``: the LLM reads a deterministic sample of chunks and proposes tag
   classes (stored as JSON on the ``Corpus`` node, versioned);
2. ``tag_corpus``: every pending chunk gets ``(:Tag {class, name})-[:TAGS]->(:Chunk)``;
3. ``QueryTagger.learn``: for QA samples (question + its gold chunks) the LLM maps colloquial
   question tags onto corpus tags; mappings are stored as ``(:Tag {class:'query'})-[:MAPS_TO
   {confidence}]->(:Tag)`` and reused;
4. ``QueryTagger.chunks_for``: at query time, tags of the query -> exact or mapped corpus tags ->
   tagged chunks (the keyword path retrieval can add to its candidates).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from kg_platform.config import Settings
from kg_platform.distilling.common import (
    StepReport,
    make_id,
    normalise_name,
    pending_chunks,
    replace_chunk_output,
)
from kg_platform.errors import LLMError
from kg_platform.graph import GraphClient
from kg_platform.llm import LLMClient, get_prompt
from kg_platform.graph.corpus_indexes import own_prefix
from kg_platform.llm.replies import ChunkTags, TagClasses, TagMappings

log = logging.getLogger(__name__)

QUERY_TAG_PREFIX = "qtag:"


def _classes_text(classes: list[dict[str, str]]) -> str:
    return "\n".join(f"- {c['name']}: {c.get('description', '')}".rstrip(": ") for c in classes)


def ensure_tag_classes(
    graph: GraphClient, llm: LLMClient, settings: Settings, *, corpus: str
) -> list[dict[str, str]]:
    """The corpus's tag classes, proposing them from sample chunks on first use."""
    version = get_prompt("tag_classes").key
    rec = graph.read("distill/corpus_tag_classes", corpus=corpus)
    if rec and rec[0]["classes"] and rec[0]["version"] == version:
        return json.loads(rec[0]["classes"])
    cfg = settings.tuning.distill
    samples = graph.read(
        "distill/sample_chunks", corpus=corpus, levels=cfg.levels, limit=cfg.tag_sample_chunks
    )
    if not samples:
        return []
    text = "\n\n".join(f"[{i + 1}] {r['text'][:800]}" for i, r in enumerate(samples))
    out = llm.structured("tag_classes", {"samples": text, "max_classes": cfg.max_tag_classes})
    assert isinstance(out, TagClasses)
    seen: set[str] = set()
    classes: list[dict[str, str]] = []
    for c in out.classes:
        name = normalise_name(c.name).replace(" ", "_")
        if name and name not in seen and name != "query":
            seen.add(name)
            classes.append({"name": name, "description": c.description.strip()[:200]})
    classes = classes[: cfg.max_tag_classes]
    graph.write(
        "distill/set_corpus_tag_classes",
        corpus=corpus,
        classes=json.dumps(classes),
        version=version,
    )
    return classes


def tag_rows(
    tags: ChunkTags, classes: list[dict[str, str]], corpus: str, chunk_id: str
) -> list[dict[str, Any]]:
    """Tag rows of one chunk, keeping only the corpus's classes (pure)."""
    allowed = {c["name"] for c in classes}
    rows: list[dict[str, Any]] = []
    for cls, names in tags.tags.items():
        cname = normalise_name(cls).replace(" ", "_")
        if cname not in allowed:
            continue
        for name in names[:5]:
            key = normalise_name(name)
            if len(key) < 2:
                continue
            rows.append(
                {
                    "id": make_id("tag", corpus, cname, key),
                    "name": name.strip(),
                    "key": key,
                    "class": cname,
                    "corpus": corpus,
                    "chunk_id": chunk_id,
                }
            )
    return rows


def tag_corpus(
    graph: GraphClient,
    llm: LLMClient,
    settings: Settings,
    *,
    corpus: str,
    source_ids: list[str] | None = None,
    batch: int = 32,
) -> StepReport:
    """Auto-tagging steps 1-2 over every pending chunk; resumable."""
    report = StepReport("tags")
    classes = ensure_tag_classes(graph, llm, settings, corpus=corpus)
    if not classes:
        return report
    digest = hashlib.sha256(json.dumps(classes, sort_keys=True).encode()).hexdigest()[:8]
    version = f"{get_prompt('tag_extract').key}:{digest}"
    ctext = _classes_text(classes)
    for rows in pending_chunks(
        graph,
        corpus=corpus,
        levels=settings.tuning.distill.levels,
        step="tags",
        version=version,
        source_ids=source_ids,
        batch=batch,
    ):
        outs = llm.map_structured("tag_extract", [{"classes": ctext, "text": r.text} for r in rows])
        done: list[str] = []
        tag_list: list[dict[str, Any]] = []
        for row, out in zip(rows, outs):
            report.chunks += 1
            if not isinstance(out, ChunkTags):
                report.failed.append(row.id)
                report.errors.append(f"{row.id}: {str(out).splitlines()[0]}")
                continue
            done.append(row.id)
            tag_list.extend(tag_rows(out, classes, corpus, row.id))
        if not done:
            continue

        replace_chunk_output(
            graph,
            step="tags",
            version=version,
            chunk_ids=done,
            writes=[("distill/write_tags", tag_list)],
            corpus=corpus,
        )
        report.written += len(tag_list)
    graph.write("distill/drop_orphan_tags", corpus=corpus)
    return report


@dataclass
class MappedTag:
    id: str
    name: str
    cls: str
    confidence: float
    via: str  # the query tag it came from


class QueryTagger:
    """Query-side auto-tagging (PIKE-RAG paper) for one corpus."""

    def __init__(self, graph: GraphClient, llm: LLMClient, settings: Settings, corpus: str):
        self.graph, self.llm, self.settings, self.corpus = graph, llm, settings, corpus
        rec = graph.read("distill/corpus_tag_classes", corpus=corpus)
        self.classes: list[dict[str, str]] = (
            json.loads(rec[0]["classes"]) if rec and rec[0]["classes"] else []
        )

    def query_tags(self, question: str) -> list[str]:
        if not self.classes:
            return []
        out = self.llm.structured(
            "query_tags", {"classes": _classes_text(self.classes), "question": question}
        )
        assert isinstance(out, ChunkTags)
        names = [n for ns in out.tags.values() for n in ns]
        seen: set[str] = set()
        return [
            n
            for n in names
            if len(normalise_name(n)) >= 2
            and not (normalise_name(n) in seen or seen.add(normalise_name(n)))
        ]

    def map_tags(self, names: list[str]) -> list[MappedTag]:
        """Corpus tags for query tags: stored mappings, exact keys, else the LLM's mapping."""
        from kg_platform.graph.lucene import fulltext_query

        keys = {normalise_name(n): n for n in names if normalise_name(n)}
        if not keys:
            return []
        mapped: list[MappedTag] = []
        known = self.graph.read(
            "distill/query_tag_maps", keys=list(keys), prefix=f"{QUERY_TAG_PREFIX}{self.corpus}:"
        )
        done = set()
        for r in known:
            done.add(r["key"])
            mapped.append(
                MappedTag(r["id"], r["name"], r["class"], float(r["confidence"]), keys[r["key"]])
            )
        todo = [k for k in keys if k not in done]
        rows = [{"key": k, "q": fulltext_query(keys[k])} for k in todo]
        rows = [r for r in rows if r["q"]]
        if not rows:
            return mapped
        cands = {
            r["key"]: r["cands"]
            for r in self.graph.read(
                "distill/tag_candidates",
                rows=rows,
                corpus=self.corpus,
                ix=own_prefix(self.graph, self.corpus),
                fetch=25,
                k=8,
            )
        }
        need_llm: dict[str, list[dict]] = {}
        for key in todo:
            cs = cands.get(key) or []
            exact = [c for c in cs if c["exact"]]
            if exact:
                mapped.extend(
                    MappedTag(c["id"], c["name"], c["class"], 1.0, keys[key]) for c in exact
                )
            elif cs:
                need_llm[key] = cs
        if need_llm:
            mapped.extend(self._llm_map(need_llm, keys))
        return mapped

    def _llm_map(self, need: dict[str, list[dict]], keys: dict[str, str]) -> list[MappedTag]:
        by_name: dict[str, dict] = {}
        lines = []
        for cs in need.values():
            for c in cs:
                if normalise_name(c["name"]) not in by_name:
                    by_name[normalise_name(c["name"])] = c
                    lines.append(f"{c['class']}: {c['name']}")
        try:
            out = self.llm.structured(
                "tag_map",
                {"query_tags": "\n".join(keys[k] for k in need), "corpus_tags": "\n".join(lines)},
            )
        except LLMError as exc:
            log.warning("tag mapping failed: %s", exc)
            return []
        assert isinstance(out, TagMappings)
        found: list[MappedTag] = []
        store: list[dict[str, Any]] = []
        for m in out.mappings:
            qk, ck = normalise_name(m.query_tag), normalise_name(m.corpus_tag)
            c = by_name.get(ck)
            if (
                qk not in need
                or c is None
                or m.confidence < self.settings.tuning.distill.map_confidence
            ):
                continue
            conf = max(0.0, min(1.0, float(m.confidence)))
            found.append(MappedTag(c["id"], c["name"], c["class"], conf, keys[qk]))
            store.append(
                {
                    "qid": f"{QUERY_TAG_PREFIX}{self.corpus}:{qk}",
                    "qname": keys[qk],
                    "qkey": qk,
                    "tag_id": c["id"],
                    "confidence": conf,
                }
            )
        if store:
            self.graph.write("distill/write_tag_maps", rows=store, corpus=self.corpus)
        return found

    def learn(self, samples: list[tuple[str, list[str]]]) -> int:
        """Step 3: for QA samples (question, gold chunk ids), let the LLM map the question's
        tags onto the tags of its gold chunks; mappings are stored and reused at query time.
        Returns the number of mappings stored."""
        n = 0
        for question, chunk_ids in samples:
            names = self.query_tags(question)
            keys = {normalise_name(x): x for x in names if normalise_name(x)}
            cands = [dict(r) for r in self.graph.read("distill/chunk_tags", ids=chunk_ids)]
            if not keys or not cands:
                continue
            exact = {normalise_name(c["name"]) for c in cands}
            need = {k: cands for k in keys if k not in exact}
            if need:
                n += len(self._llm_map(need, keys))
        return n

    def chunks_for(self, question: str, k: int) -> list[dict[str, Any]]:
        """Step 4: tagged chunks for a question, scored by the confidence of their tags."""
        tags = self.map_tags(self.query_tags(question))
        if not tags:
            return []
        weights: dict[str, float] = {}
        for t in tags:
            weights[t.id] = max(weights.get(t.id, 0.0), t.confidence)
        recs = self.graph.read(
            "distill/tagged_chunks",
            k=k,
            levels=self.settings.tuning.distill.levels,
            tags=[{"id": i, "weight": w} for i, w in weights.items()],
        )
        return [dict(r) for r in recs]


__all__ = ["MappedTag", "QueryTagger", "ensure_tag_classes", "tag_corpus", "tag_rows"]
