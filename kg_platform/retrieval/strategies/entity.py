"""``entity``: chunks reached through the entities a question names (HippoRAG's idea in Cypher).

1. The question's mentions are its word n-grams that are entity keys of the corpus, longest
   first, and its capitalised names that match none
   (:mod:`~kg_platform.retrieval.strategies.question_keys`; ``entity_graph.question_finder = spacy`` runs
   the NLP extractor on the question instead); each is matched to the corpus's entities by
   normalised name and, for names, by name embedding (``retrieval/entity_seeds``).
2. A personalized PageRank over Entity -[:MENTIONED_IN]- Chunk, three power-iteration steps in one
   parameterised query (``retrieval/entity_ppr``), restarts at those entities and at the
   level-1 chunks nearest the question, and scores level-1 chunks. A paragraph that shares an
   entity with a paragraph the question names gets mass through that entity: the second hop of a
   multi-hop question, which neither BM25 nor the question's vector may find.

Each item's breakdown keeps the walk's mass per step (``ppr_t0`` .. ``ppr_t3``) and the
entities that brought it in, as ``seed:<name>`` (named by the question) or ``entity:<name>``
(reached on the way), and their ids are on its path, so ``--explain`` and the Browser show the
entity hops. A question that names no entity of the corpus still runs, seeded by the question's
chunks (the walk then follows the entities those chunks mention).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from kg_platform.distilling.nlp import CONCEPT_TYPE
from kg_platform.embedding.base import quantized_embedder
from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, register_strategy
from kg_platform.graph.params import vector_param

log = logging.getLogger(__name__)

SEEDS_QUERY = "retrieval/entity_seeds"
QUERY = "retrieval/entity_ppr"
#: the walk's query is rendered from this (its power-iteration step written once)
TEMPLATE = "retrieval/entity_ppr.cypher.template"
#: power-iteration steps: the template's tail names w0 .. w3
STEPS = 3
#: type of a question's capitalised name that matched no entity key (looked up by embedding)
UNMATCHED_NAME = "name"


class EntityStrategy:
    """``entity``: personalized PageRank from the question's entities onto level-1 chunks."""

    name = "entity"

    def __init__(self, ctx: RetrievalContext) -> None:
        self.ctx = ctx

    def question_mentions(self, query: str) -> list[tuple[str, str, str]]:
        """(normalised key, surface name, type) of the question's mentions, found as
        ``entity_graph.question_finder`` says: ``keys`` looks the question's n-grams up among
        the corpus's entity keys (:mod:`~kg_platform.retrieval.strategies.question_keys`; a capitalised
        name that matches none is typed ``name`` and found by embedding); ``spacy`` runs the
        NLP extractor on the question (none without spaCy)."""
        if self.ctx.settings.tuning.entity_graph.question_finder == "keys":
            from kg_platform.retrieval.strategies.question_keys import question_mentions

            return [
                (m.key, m.name, m.type or UNMATCHED_NAME)
                for m in question_mentions(self.ctx.graph, self.ctx.corpus, query)
            ]
        from kg_platform.distilling.nlp import load_pipeline, nlp_available, query_mentions

        model = self.ctx.settings.distill.nlp_model
        if not nlp_available(model):
            return []
        return [(m.key, m.name, m.type) for m in query_mentions(load_pipeline(model), query)]

    def seeds(self, query: str) -> tuple[list[float], list[dict[str, Any]]]:
        """The question's vector and its seed entities ``[{id, name, w, named}]`` (``named``: a
        named entity of the question, not only a common noun phrase, led to it)."""
        mentions = self.question_mentions(query)
        qv = vector_param(self.ctx.embedder.embed([query])[0])
        if not mentions:
            return qv, []
        settings = self.ctx.settings
        # the embedder that embedded the corpus's entity names (distill.name_quantize)
        names = quantized_embedder(
            self.ctx.embedder, settings.embedding, settings.tuning.distill.name_quantize
        )
        vecs = names.embed([name for _, name, _ in mentions])
        cfg = settings.tuning.entity_graph
        rows = self.ctx.graph.read(
            SEEDS_QUERY,
            rows=[
                _seed_row(key, kind == CONCEPT_TYPE, v, cfg.concept_weight)
                for (key, _, kind), v in zip(mentions, vecs)
            ],
            corpus=self.ctx.corpus,
            ix=self.ctx.index_prefix(),
            fetch=self.ctx.index_fetch(max(cfg.per_mention, 1) * 5, settings.retrieve.fetch),
            per_mention=cfg.per_mention,
            min_cos=cfg.seed_cos,
        )
        return qv, [
            {"id": r["id"], "name": r["name"], "w": float(r["w"]), "named": bool(r["named"])}
            for r in rows
        ]

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        qv, seeds = self.seeds(query)
        return self.run(qv, seeds, k)

    def run(self, qv: list[float], seeds: list[dict[str, Any]], k: int) -> list[RetrievedItem]:
        cfg = self.ctx.settings.tuning.entity_graph
        rows = self.ctx.graph.read(
            QUERY,
            seeds=[{"id": s["id"], "w": s["w"]} for s in seeds],
            qv=qv,
            fetch=self.ctx.index_fetch(max(cfg.chunk_seeds, 1), self.ctx.settings.retrieve.fetch),
            ix=self.ctx.index_prefix(),
            k_seed=cfg.chunk_seeds,
            corpus=self.ctx.corpus,
            chunk_weight=cfg.chunk_weight,
            damping=cfg.damping,
            max_degree=cfg.max_degree,
            width=cfg.width,
            k=k,
        )
        items = [self._item(r) for r in rows]
        if cfg.references_top:  # the REFERENCES hop (retrieval/strategies/references_hop.py)
            from kg_platform.retrieval.strategies.references_hop import add_referenced

            items = add_referenced(self.ctx, items, cfg.references_top, cfg.references_per)[:k]
        return items

    @staticmethod
    def _item(r: Any) -> RetrievedItem:
        breakdown: dict[str, float] = {f"ppr_t{x['t']}": float(x["s"]) for x in r["per"]}
        for v in r["via"]:
            breakdown[f"{'seed' if v['seed'] else 'entity'}:{v['name']}"] = float(v["s"])
        path = [v["id"] for v in r["via"]] + [r["id"]]
        if r["source_id"]:
            path.append(r["source_id"])
        return RetrievedItem(
            id=r["id"],
            text=r["text"] or "",
            score=float(r["score"]),
            kind="chunk",
            level=r["level"],
            source_id=r["source_id"],
            source_title=r["source_title"],
            section_title=r["section_title"],
            page=r["page"],
            tokens=r["tokens"],
            breakdown=breakdown,
            path=list(dict.fromkeys(path)),
            query=QUERY,
        )


def _seed_row(key: str, concept: bool, vec: Any, concept_weight: float) -> dict[str, Any]:
    """One question mention for ``retrieval/entity_seeds``: a common noun phrase (``concept``)
    is matched by name only, weighs ``concept_weight``, and does not count as named."""
    if concept:
        return {"key": key, "vec": None, "w": concept_weight, "named": 0}
    return {"key": key, "vec": vector_param(vec), "w": 1.0, "named": 1}


_STEP = re.compile(r"^// @step begin[^\n]*\n(?P<body>.*?)^// @step end\n", re.S | re.M)


def render_walk_query() -> str:
    """The walk's Cypher: the template with its one step block written out for t = 1..STEPS
    (``{w_in}`` -> ``w<t-1>``, ``{w_out}`` -> ``w<t>``). The steps are identical, and Cypher has
    no loop over subqueries, so the file repeats them; editing one copy by hand would let them
    drift."""
    from importlib import resources

    text = resources.files("kg_platform").joinpath("cypher", TEMPLATE).read_text(encoding="utf-8")
    match = _STEP.search(text)
    if match is None:
        raise RuntimeError(f"{TEMPLATE} has no '// @step begin' ... '// @step end' block")
    body = match.group("body")
    steps = "".join(
        body.replace("{w_in}", f"w{t - 1}").replace("{w_out}", f"w{t}") for t in range(1, STEPS + 1)
    )
    return text[: match.start()] + steps + text[match.end() :]


def write_query() -> str:
    """Rewrite ``cypher/retrieval/entity_ppr.cypher`` from the template (run after editing it)."""
    from importlib import resources

    path = Path(str(resources.files("kg_platform").joinpath("cypher", QUERY + ".cypher")))
    path.write_text(render_walk_query(), encoding="utf-8")
    return str(path)


def entity_hops(item: RetrievedItem) -> tuple[list[str], list[str]]:
    """(entities the question named, entities reached on the way) that brought ``item`` in."""
    seeds = [k[len("seed:") :] for k in item.breakdown if k.startswith("seed:")]
    hops = [k[len("entity:") :] for k in item.breakdown if k.startswith("entity:")]
    return seeds, hops


@register_strategy(
    "entity",
    "entity graph: personalized PageRank from the question's entities (NLP or LLM "
    "distilled layer) over Entity-MENTIONED_IN-Chunk, onto level-1 chunks",
)
def _entity(ctx: RetrievalContext) -> EntityStrategy:
    return EntityStrategy(ctx)


__all__ = ["EntityStrategy", "entity_hops", "render_walk_query", "write_query"]


if __name__ == "__main__":
    print(write_query())
