"""Knowledge-graph distillation (PIKE-RAG paper): entities and relations per chunk, resolved
across chunks and sources so adding documents never duplicates an entity.

Resolution, in order, for each distinct normalised name (``common.normalise_name``) of a batch:

1. exact: an Entity of the corpus with the same ``key`` (index ``entity_key``);
2. embedding: the nearest Entity of the corpus in ``entity_embedding`` with
   cos >= ``distill.entity_merge_cos`` (Neo4j's score is (1 + cos) / 2, converted in Cypher); the
   surface name is kept in ``aliases``;
3. within the batch: a new name close enough to one created earlier in the same batch joins it;
4. otherwise a new Entity with id ``h("entity", corpus, key)``.

Because a re-extracted chunk first loses its mentions and relations (and entities left without
mentions are swept), the graph never keeps facts a chunk no longer states.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np

from kg_platform.config import Settings
from kg_platform.distilling.common import (
    PendingChunk,
    StepReport,
    make_id,
    normalise_name,
    pending_chunks,
    replace_chunk_output,
)
from kg_platform.embedding import Embedder
from kg_platform.embedding.base import quantized_embedder
from kg_platform.errors import LLMError
from kg_platform.graph import GraphClient
from kg_platform.graph.params import vector_param
from kg_platform.llm import LLMClient, get_prompt
from kg_platform.graph.corpus_indexes import own_prefix
from kg_platform.llm.replies import EntityGraph

log = logging.getLogger(__name__)

PROMPT = "entities"


@dataclass
class Mention:
    key: str
    name: str
    type: str
    description: str


def _clean_type(t: str) -> str:
    t = normalise_name(t).replace(" ", "_")
    return t or "thing"


def _clean_name(name: str) -> str:
    return name.strip().strip(".,;:").strip()


def mentions_of(out: EntityGraph, max_entities: int) -> tuple[list[Mention], list[dict]]:
    """Deduplicated mentions of one chunk and its relations as key pairs (pure)."""
    by_key: dict[str, Mention] = {}
    for e in out.entities:
        key = normalise_name(e.name)
        if len(key) < 2 or key in by_key:
            continue
        if len(by_key) >= max_entities:
            break
        by_key[key] = Mention(key, _clean_name(e.name), _clean_type(e.type), e.description.strip())
    rels: list[dict] = []
    seen: set[tuple[str, str, str]] = set()
    for r in out.relations:
        a, b = normalise_name(r.source), normalise_name(r.target)
        rtype = normalise_name(r.type).replace(" ", "_") or "related_to"
        if len(a) < 2 or len(b) < 2 or a == b or (a, b, rtype) in seen:
            continue
        seen.add((a, b, rtype))
        for key, name in ((a, r.source), (b, r.target)):
            if key not in by_key:
                by_key[key] = Mention(key, _clean_name(name), "thing", "")
        rels.append({"src": a, "dst": b, "type": rtype, "evidence": r.evidence[:500]})
    return list(by_key.values()), rels


class EntityResolver:
    """Maps normalised names to Entity ids of one corpus (exact key, then embedding).

    One resolver serves a whole run of a step. When the corpus had no entity when the run began
    (a first ingestion), every entity the embedding step could match is one this resolver created,
    so it searches its own copy of their vectors instead of the vector index: the same answer,
    exact rather than approximate, without a Neo4j query per new name. Past ``remember``
    entities it goes back to the index, which holds them all by then."""

    def __init__(
        self,
        graph: GraphClient,
        embedder: Embedder,
        corpus: str,
        threshold: float,
        *,
        remember: int = 200_000,
    ) -> None:
        self.graph = graph
        self.embedder = embedder
        self.corpus = corpus
        self.threshold = threshold
        self._remember = remember
        self._created_in_run: _EntityVectors | None = None  # set while the corpus was empty
        self._checked_corpus = False

    def resolve(
        self, mentions: dict[str, Mention]
    ) -> tuple[dict[str, str], dict[str, str | None], dict[str, list[float]]]:
        """(key -> entity id, key -> alias or None, key -> embedding of new entities)."""
        keys = sorted(mentions)
        ids: dict[str, str] = {}
        alias: dict[str, str | None] = {}
        if not keys:
            return ids, alias, {}
        for rec in self.graph.read("distill/entities_by_key", keys=keys, corpus=self.corpus):
            ids[rec["key"]] = rec["id"]
            alias[rec["key"]] = None
        rest = [k for k in keys if k not in ids]
        new_vecs: dict[str, list[float]] = {}
        if not rest:
            return ids, alias, new_vecs
        vecs = self.embedder.embed([mentions[k].name for k in rest])
        near = self._nearest_existing(rest, vecs)
        created = _EntityVectors(len(rest), vecs.shape[1])
        for key, vec in zip(rest, vecs):
            m = mentions[key]
            hit = near.get(key)
            if (
                hit is not None
                and hit["id"]
                and hit["cos"] is not None
                and float(hit["cos"]) >= self.threshold
                and compatible(key, m.type, hit["matched_key"], hit["type"])
            ):
                ids[key], alias[key] = hit["id"], m.name
                continue
            joined = created.nearest(key, m.type, vec, self.threshold)
            if joined is not None:
                ids[key], alias[key] = joined, m.name
                continue
            eid = make_id("entity", self.corpus, key)
            ids[key], alias[key] = eid, None
            new_vecs[key] = vector_param(vec)
            created.add(eid, key, m.type, vec)
        self._remember_created(created)
        return ids, alias, new_vecs

    def _nearest_existing(self, keys: list[str], vecs: np.ndarray) -> dict[str, dict]:
        """Per key, the nearest entity of the corpus before this batch ({id, matched_key, type,
        cos}): from this run's own entities while the corpus was empty when it began, else from
        the vector index (5.26 cannot pre-filter by corpus, hence the over-fetch)."""
        if not self._checked_corpus:
            self._checked_corpus = True
            rows = self.graph.read("distill/corpus_has_entities", corpus=self.corpus)
            if not (rows and rows[0]["has_entities"]):
                self._created_in_run = _EntityVectors(1024, vecs.shape[1])
        if self._created_in_run is not None:
            return {
                key: hit
                for key, vec in zip(keys, vecs)
                if (hit := self._created_in_run.closest(vec)) is not None
            }
        return {
            r["key"]: r
            for r in self.graph.read(
                "distill/entity_neighbours",
                corpus=self.corpus,
                ix=own_prefix(self.graph, self.corpus),
                fetch=25,
                rows=[{"key": k, "vec": vector_param(v)} for k, v in zip(keys, vecs)],
            )
        }

    def _remember_created(self, created: _EntityVectors) -> None:
        run = self._created_in_run
        if run is None:
            return
        if len(run) + len(created) > self._remember:
            self._created_in_run = None  # written by now: the vector index answers from here on
            return
        run.extend(created)


class _EntityVectors:
    """Entities (id, key, type) with their unit vectors, searchable by one matrix product.

    Why a matrix: a batch of a few hundred chunks creates thousands of entities, and comparing
    each new name with every earlier one in Python was quadratic (seconds per batch)."""

    def __init__(self, capacity: int, dim: int) -> None:
        self._vecs = np.zeros((max(capacity, 1), dim), dtype=np.float32)
        self._meta: list[tuple[str, str, str]] = []  # (id, key, type)

    def __len__(self) -> int:
        return len(self._meta)

    def add(self, eid: str, key: str, etype: str, vec: np.ndarray) -> None:
        n = len(self._meta)
        if n == len(self._vecs):
            self._vecs = np.concatenate([self._vecs, np.zeros_like(self._vecs)])
        self._vecs[n] = vec
        self._meta.append((eid, key, etype))

    def extend(self, other: _EntityVectors) -> None:
        for i, (eid, key, etype) in enumerate(other._meta):
            self.add(eid, key, etype, other._vecs[i])

    def closest(self, vec: np.ndarray) -> dict | None:
        """The closest entity whatever its type, as the vector index answers: {id,
        matched_key, type, cos}; None when empty."""
        n = len(self._meta)
        if n == 0:
            return None
        sims = self._vecs[:n] @ np.asarray(vec, dtype=np.float32)
        i = int(np.argmax(sims))
        eid, key, etype = self._meta[i]
        return {"id": eid, "matched_key": key, "type": etype, "cos": float(sims[i])}

    def nearest(self, key: str, etype: str, vec: np.ndarray, threshold: float) -> str | None:
        """The id of the closest compatible entity with cosine >= ``threshold``, or None."""
        n = len(self._meta)
        if n == 0:
            return None
        sims = self._vecs[:n] @ np.asarray(vec, dtype=np.float32)
        above = np.flatnonzero(sims >= threshold)
        for i in above[np.argsort(-sims[above], kind="stable")]:
            eid, key2, type2 = self._meta[int(i)]
            if compatible(key, etype, key2, type2):
                return eid
        return None


_NUMBERISH = re.compile(r"^(?:\d+(?:st|nd|rd|th)?|[ivxlc]+)$")


def compatible(key_a: str, type_a: str | None, key_b: str | None, type_b: str | None) -> bool:
    """Guards on an embedding merge: the same type (``thing`` matches any), and the same
    numbers / roman numerals / initials, so ``world war i`` != ``world war ii`` and
    ``george w bush`` != ``george h w bush`` however close their vectors are."""
    ta, tb = type_a or "thing", type_b or "thing"
    if ta != tb and "thing" not in (ta, tb):
        return False

    def marks(key: str) -> set[str]:
        return {t for t in key.split() if _NUMBERISH.match(t) or len(t) == 1}

    return marks(key_a) == marks(key_b or "")


def extract_entities(
    graph: GraphClient,
    embedder: Embedder,
    llm: LLMClient,
    settings: Settings,
    *,
    corpus: str,
    source_ids: list[str] | None = None,
    batch: int = 32,
) -> StepReport:
    """Entities and relations for every pending chunk of ``corpus``; resumable."""
    cfg = settings.tuning.distill
    version = get_prompt(PROMPT).key
    report = StepReport("entities")
    names = quantized_embedder(embedder, settings.embedding, cfg.name_quantize)
    resolver = EntityResolver(graph, names, corpus, cfg.entity_merge_cos)
    for rows in pending_chunks(
        graph,
        corpus=corpus,
        levels=cfg.levels,
        step="entities",
        version=version,
        source_ids=source_ids,
        batch=batch,
    ):
        outs = llm.map_structured(
            PROMPT,
            [
                {"title": r.title or "(untitled)", "text": r.text, "max_entities": cfg.max_entities}
                for r in rows
            ],
        )
        per_chunk: list[tuple[PendingChunk, list[Mention], list[dict]]] = []
        for row, out in zip(rows, outs):
            report.chunks += 1
            if not isinstance(out, EntityGraph):
                report.failed.append(row.id)
                report.errors.append(
                    f"{row.id}: {str(out).splitlines()[0]}"
                    if isinstance(out, LLMError)
                    else f"{row.id}: {out!r}"
                )
                continue
            ments, rels = mentions_of(out, cfg.max_entities)
            per_chunk.append((row, ments, rels))
        if not per_chunk:
            continue
        written, related = write_chunk_facts(
            graph, resolver, corpus, per_chunk, version=version, by="llm"
        )
        report.written += written
        report.relations += related
    graph.write("distill/drop_orphan_entities", corpus=corpus)
    return report


def write_chunk_facts(
    graph: GraphClient,
    resolver: EntityResolver,
    corpus: str,
    per_chunk: list[tuple[PendingChunk, list[Mention], list[dict]]],
    *,
    version: str,
    by: str,
) -> tuple[int, int]:
    """Resolve the chunks' mentions, then in ONE transaction clear what the chunks had, write
    the entities, mentions and relations (tagged ``by`` = the extractor) and mark the chunks
    done at ``version`` (:func:`~kg_platform.distilling.common.replace_chunk_output`): a crash leaves every chunk either as it was or done. Returns (mentions written,
    relations written). Both extractors (LLM, NLP) write through here."""
    if not per_chunk:
        return 0, 0
    all_mentions: dict[str, Mention] = {}
    for _, ments, _ in per_chunk:
        for m in ments:
            all_mentions.setdefault(m.key, m)
    ids, alias, new_vecs = resolver.resolve(all_mentions)
    ent_rows: list[dict] = []
    rel_rows: list[dict] = []
    for row, ments, rels in per_chunk:
        for m in ments:
            ent_rows.append(
                {
                    "id": ids[m.key],
                    "key": m.key,
                    "name": m.name,
                    "type": m.type,
                    "description": m.description,
                    "corpus": corpus,
                    "embedding": new_vecs.get(m.key),
                    "alias": alias.get(m.key),
                    "chunk_id": row.id,
                    "by": by,
                }
            )
        for r in rels:
            if ids[r["src"]] == ids[r["dst"]]:
                continue
            rel_rows.append(
                {
                    "src": ids[r["src"]],
                    "dst": ids[r["dst"]],
                    "type": r["type"],
                    "evidence": r["evidence"],
                    "chunk_id": row.id,
                    "source_id": row.source_id,
                    "by": by,
                }
            )
    # rows naming an entity by its own key first, so ON CREATE never takes an alias's name
    ent_rows.sort(key=lambda r: r["alias"] is not None)
    done = [row.id for row, _, _ in per_chunk]

    replace_chunk_output(
        graph,
        step="entities",
        version=version,
        chunk_ids=done,
        writes=[("distill/write_entities", ent_rows), ("distill/write_relations", rel_rows)],
        corpus=corpus,
    )
    return len(ent_rows), len(rel_rows)


__all__ = [
    "EntityResolver",
    "Mention",
    "compatible",
    "extract_entities",
    "mentions_of",
    "write_chunk_facts",
]
