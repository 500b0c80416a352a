"""MoG and MoGG Cypher selection agrees exactly with the Python reference on a hand-built graph.

The graph follows docs/graph-model.md: two corpora; each has one source with level-1..3 chunks
(PART_OF pairs adjacent chunks), two pieces per level-1 chunk, and SIMILAR edges between pieces.
"""

from __future__ import annotations

import itertools

import pytest

from kg_platform.retrieval.base import RetrievalContext, get_strategy
from kg_platform.graph.corpus_indexes import corpus_prefix
from kg_platform.graph.lucene import fulltext_query
from kg_platform.retrieval.strategies.mog import CorpusPlan, MoGStrategy
from tests.support.fixtures import _wipe, index_corpus
from tests.support.reference import PieceInfo, mogg_reference_select, reference_select
from kg_platform.retrieval.strategies import mogg as mogg_mod
from kg_platform.retrieval.strategies.mogg import MoGGStrategy

pytestmark = pytest.mark.integration

TEXTS = {
    "tA": [
        "The river Elbe flows through Dresden and Hamburg to the North Sea.",
        "Dresden is the capital of Saxony, famous for its baroque architecture.",
        "Hamburg has a large port on the river Elbe and many bridges.",
        "The North Sea borders Germany, Denmark and the Netherlands.",
        "Saxony produced porcelain in Meissen near Dresden since 1710.",
        "The port of Hamburg handles containers from Asia and America.",
    ],
    "tB": [
        "The Danube flows through Vienna and Budapest to the Black Sea.",
        "Vienna is the capital of Austria and sits on the river Danube.",
        "Budapest has famous bridges across the Danube river.",
        "The Black Sea borders Romania, Bulgaria and Ukraine.",
    ],
}
EDGES = [  # (corpus, piece a, piece b, score) -- piece ids are f"{corpus}-p{chunk}{0|1}"
    ("tA", "p00", "p20", 0.6),
    ("tA", "p00", "p10", 0.4),
    ("tA", "p20", "p51", 0.5),
    ("tA", "p11", "p40", 0.7),
    ("tA", "p30", "p01", 0.3),
    ("tA", "p51", "p21", 0.9),
    ("tB", "p00", "p20", 0.5),
    ("tB", "p10", "p01", 0.45),
    ("tB", "p21", "p30", 0.35),
]


def _build(graph, embedder) -> dict:
    """Create the graph; return the structures the references need."""
    chunks, pieces, ancestors, corpus_of, infos = [], [], {}, {}, {}
    for corpus, texts in TEXTS.items():
        src = f"{corpus}-src"
        l1 = [f"{corpus}-c1-{i}" for i in range(len(texts))]
        for i, t in enumerate(texts):
            chunks.append(
                {
                    "id": l1[i],
                    "level": 1,
                    "text": t,
                    "corpus": corpus,
                    "src": src,
                    "ord": i,
                    "parent": f"{corpus}-c2-{i // 2}",
                }
            )
            ancestors[l1[i]] = {1: l1[i], 2: f"{corpus}-c2-{i // 2}", 3: f"{corpus}-c3-{i // 4}"}
            corpus_of[l1[i]] = corpus
            words = t.split()
            half = len(words) // 2
            for j, ptext in enumerate([" ".join(words[:half]), " ".join(words[half:])]):
                pid = f"{corpus}-p{i}{j}"
                pieces.append(
                    {
                        "id": pid,
                        "text": ptext,
                        "corpus": corpus,
                        "src": src,
                        "chunk": l1[i],
                        "doc_ord": 2 * i + j,
                        "tokens": len(ptext.split()),
                    }
                )
                infos[pid] = PieceInfo(pid, corpus, src, 2 * i + j, len(ptext.split()))
        for j in range((len(texts) + 1) // 2):
            members = texts[2 * j : 2 * j + 2]
            chunks.append(
                {
                    "id": f"{corpus}-c2-{j}",
                    "level": 2,
                    "text": " ".join(members),
                    "corpus": corpus,
                    "src": src,
                    "ord": j,
                    "parent": f"{corpus}-c3-{j // 2}",
                }
            )
        for j in range((len(texts) + 3) // 4):
            chunks.append(
                {
                    "id": f"{corpus}-c3-{j}",
                    "level": 3,
                    "text": " ".join(texts[4 * j : 4 * j + 4]),
                    "corpus": corpus,
                    "src": src,
                    "ord": j,
                    "parent": None,
                }
            )
    vecs = embedder.embed([c["text"] for c in chunks])
    for c, v in zip(chunks, vecs):
        c["vec"] = v.tolist()
    graph.write_raw(
        "UNWIND $corpora AS c MERGE (k:Corpus {name: c.name}) "
        "MERGE (s:Source {id: c.name + '-src'}) "
        "SET s.corpus = c.name, s.title = c.name + ' title', s.tokens = c.tokens "
        "MERGE (k)-[:HAS_SOURCE]->(s)",
        corpora=[{"name": n, "tokens": sum(len(t.split()) for t in ts)} for n, ts in TEXTS.items()],
    )
    graph.write_raw(
        "UNWIND $rows AS r CREATE (c:Chunk {id: r.id, level: r.level, text: r.text, corpus: r.corpus,"
        " source_id: r.src, ord: r.ord, tokens: size(split(r.text, ' '))}) "
        "WITH c, r CALL (c, r) { WITH c, r WHERE r.level = 1 SET c:L1 } "
        "CALL (c, r) { WITH c, r WHERE r.level = 2 SET c:L2 } "
        "CALL (c, r) { WITH c, r WHERE r.level = 3 SET c:L3 } "
        "WITH c, r CALL db.create.setNodeVectorProperty(c, 'embedding', r.vec)",
        rows=chunks,
    )
    graph.write_raw(
        "UNWIND $rows AS r MATCH (a:Chunk {id: r.id}), (b:Chunk {id: r.parent}) "
        "CREATE (a)-[:PART_OF]->(b)",
        rows=[c for c in chunks if c["parent"]],
    )
    for p, v in zip(pieces, embedder.embed([p["text"] for p in pieces])):
        p["vec"] = v.tolist()
    graph.write_raw(
        "UNWIND $rows AS r MATCH (c:Chunk {id: r.chunk}) CREATE (p:Piece {id: r.id, text: r.text, "
        "corpus: r.corpus, source_id: r.src, chunk_id: r.chunk, doc_ord: r.doc_ord, tokens: r.tokens})"
        "-[:IN]->(c) WITH p, r CALL db.create.setNodeVectorProperty(p, 'embedding', r.vec)",
        rows=pieces,
    )
    edges: dict[str, dict[str, float]] = {}
    rows = []
    for corpus, a, b, s in EDGES:
        a, b = f"{corpus}-{a}", f"{corpus}-{b}"
        rows.append({"a": a, "b": b, "s": s})
        edges.setdefault(a, {})[b] = s
        edges.setdefault(b, {})[a] = s
    graph.write_raw(
        "UNWIND $rows AS r MATCH (a:Piece {id: r.a}), (b:Piece {id: r.b}) "
        "CREATE (a)-[:SIMILAR {score: r.s}]->(b)",
        rows=rows,
    )
    # NEXT between consecutive pieces of a source, as ingestion writes them; a hop over NEXT
    # weighs 1.0 (the Cypher's coalesce), and the better of two parallel edges counts
    by_source: dict[str, list[dict]] = {}
    for p in pieces:
        by_source.setdefault(p["src"], []).append(p)
    next_rows = [
        {"a": a["id"], "b": b["id"]}
        for ps in by_source.values()
        for a, b in zip(
            sorted(ps, key=lambda p: p["doc_ord"]), sorted(ps, key=lambda p: p["doc_ord"])[1:]
        )
    ]
    graph.write_raw(
        "UNWIND $rows AS r MATCH (a:Piece {id: r.a}), (b:Piece {id: r.b}) CREATE (a)-[:NEXT]->(b)",
        rows=next_rows,
    )
    with_next = {u: dict(vs) for u, vs in edges.items()}
    for r in next_rows:
        for u, v in ((r["a"], r["b"]), (r["b"], r["a"])):
            with_next.setdefault(u, {})[v] = max(1.0, with_next.get(u, {}).get(v, 0.0))
    for corpus in TEXTS:  # hand-written nodes: label them and build the corpus's own indexes
        index_corpus(graph, corpus)
    return {
        "ancestors": ancestors,
        "corpus_of": corpus_of,
        "pieces": infos,
        "edges": edges,
        "edges_with_next": with_next,
    }


_WORLD_SHAPE = (
    "MATCH (n) WHERE NOT n:SchemaMigration AND NOT n:SchemaInfo "
    "OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS edges"
)


@pytest.fixture(scope="module")
def built_world(graph_session, embedder):
    """The hand-built graph, written once for the module (every test reads it; the router
    training test deletes the router it writes)."""
    _wipe(graph_session)
    data = _build(graph_session, embedder)
    return data, graph_session.read_raw(_WORLD_SHAPE)[0]


@pytest.fixture()
def world(built_world, graph_session, embedder, settings):
    """A fresh context over the module's graph; the graph is written again when a test before
    this one left it with other nodes or edges than it was built with."""
    data, shape = built_world
    if graph_session.read_raw(_WORLD_SHAPE)[0] != shape:
        _wipe(graph_session)
        data = _build(graph_session, embedder)
    ctx = RetrievalContext(graph=graph_session, embedder=embedder, settings=settings)
    return ctx, data


_FULLTEXT = (
    "CALL db.index.fulltext.queryNodes($index, $q, {limit: 1000}) YIELD node, score "
    "RETURN node.corpus AS corpus, node.id AS id, score"
)
_VECTOR = (
    "CALL db.index.vector.queryNodes($index, 1000, $qv) YIELD node, score "
    "RETURN node.corpus AS corpus, node.id AS id, 2 * score - 1 AS score"
)


def _own_hits(graph, name: str, cypher: str, **params) -> list:
    """Every hit of every corpus's own index called ``name`` (no index spans the corpora)."""
    return [
        r
        for corpus in TEXTS
        for r in graph.read_raw(cypher, index=corpus_prefix(corpus) + name, **params)
    ]


def _chunk_hits(graph, query: str, levels: int) -> dict:
    hits = {}
    for g in range(1, levels + 1):
        rows = _own_hits(graph, f"chunk_text_l{g}", _FULLTEXT, q=fulltext_query(query))
        for r in rows:
            hits.setdefault((r["corpus"], g), []).append((r["id"], r["score"]))
    return hits


QUESTIONS = [
    "Which river flows through Dresden and Hamburg?",
    "bridges over the river",
    "capital city on the Danube",
    "North Sea and Black Sea borders",
]


def _reference(ctx, data, hits: dict, plans, normalise: str = "minmax") -> list:
    """:func:`reference_select` on the world graph with the context's MoG settings, top 3."""
    return reference_select(
        hits,
        data["ancestors"],
        data["corpus_of"],
        plans,
        k_r=ctx.settings.tuning.mog.k_r,
        k=3,
        normalise=normalise,
        skip_below=ctx.settings.tuning.mog.level_skip,
    )


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("normalise", ["minmax", "max"])
def test_mog_cypher_equals_python_reference(world, question, normalise):
    ctx, data = world
    ctx.settings.tuning.mog.normalise = normalise
    try:
        plans = [CorpusPlan("tA", (0.2, 0.7, 0.1), 2), CorpusPlan("tB", (0.6, 0.1, 0.3), 3)]
        got = MoGStrategy(ctx, scoring="bm25").run(question, 3, plans)
        # the Cypher skips the levels mog.level_skip leaves out: so does the reference
        want = _reference(ctx, data, _chunk_hits(ctx.graph, question, 3), plans, normalise)
    finally:
        ctx.settings.tuning.mog.normalise = "minmax"
    assert want, "the reference found nothing: the test graph is wrong"
    assert [(it.id, it.path[0]) for it in got] == [(cid, c) for cid, _, c in want]
    assert [it.score for it in got] == pytest.approx([s for _, s, _ in want], abs=1e-9)
    for it in got:  # containers are at the router level of their corpus (or below for short docs)
        assert it.level == (2 if it.id.startswith("tA") else 3)
        assert it.query == "retrieval/mog_bm25" and it.breakdown


def _vector_hits(graph, qvec, levels: int) -> dict:
    hits = {}
    for g in range(1, levels + 1):
        rows = _own_hits(graph, f"chunk_embedding_l{g}", _VECTOR, qv=[float(x) for x in qvec])
        for r in rows:
            hits.setdefault((r["corpus"], g, "vector"), []).append((r["id"], r["score"]))
    return hits


ALL_LEVELS_WEIGHTED = [CorpusPlan("tA", (0.2, 0.7, 0.1), 2), CorpusPlan("tB", (0.6, 0.1, 0.3), 3)]
# With mog.level_skip = 0.2, tA's level 1 and tB's level 2 weigh less than 0.2 times their
# corpus's largest weight: not searched; tB's level 3 does too, but it is g_r, always searched
LOW_WEIGHTS = [CorpusPlan("tA", (0.02, 0.9, 0.3), 2), CorpusPlan("tB", (0.6, 0.01, 0.001), 3)]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(
    "plans, level_skip",
    [(ALL_LEVELS_WEIGHTED, 0.0), (LOW_WEIGHTS, 0.2)],
    ids=["every-level", "skip-low-weights"],
)
def test_mog_hybrid_cypher_equals_python_reference(world, question, plans, level_skip):
    """`mog` (hybrid scoring): each level's BM25 and cosine top-k_r normalised on their own,
    added; levels weighted far below the router's favourite are skipped (their index queries
    are most of MoG's time)."""
    ctx, data = world
    assert [p.searched_levels(0.2) for p in LOW_WEIGHTS] == [[2, 3], [1, 3]]
    assert [p.searched_levels(0.0) for p in ALL_LEVELS_WEIGHTED] == [[1, 2, 3], [1, 2, 3]]
    old = ctx.settings.tuning.mog.level_skip
    ctx.settings.tuning.mog.level_skip = level_skip
    try:
        qvec = ctx.embedder.embed([question])[0]
        got = MoGStrategy(ctx, scoring="hybrid").run(question, 3, plans, qvec)
        hits = {(c, g, "bm25"): h for (c, g), h in _chunk_hits(ctx.graph, question, 3).items()}
        hits.update(_vector_hits(ctx.graph, qvec, 3))
        want = _reference(ctx, data, hits, plans)
        bm25_only = _reference(
            ctx, data, {k[:2]: v for k, v in hits.items() if k[2] == "bm25"}, plans
        )
    finally:
        ctx.settings.tuning.mog.level_skip = old
    assert want and [it.query for it in got] == ["retrieval/mog_hybrid"] * len(got)
    assert [(it.id, it.path[0]) for it in got] == [(cid, c) for cid, _, c in want]
    assert [it.score for it in got] == pytest.approx([s for _, s, _ in want], abs=1e-9)
    assert [s for _, s, _ in want] != pytest.approx([s for _, s, _ in bm25_only], abs=1e-9)


def test_mog_dense_variant_and_fixed_level_without_router(world, caplog):
    ctx, _ = world
    old = ctx.settings.mog.default_router
    ctx.settings.mog.default_router = "none"  # no default router: the fixed level
    try:
        items = get_strategy("mog", ctx).retrieve("Which river flows through Dresden?", 2)
        dense = get_strategy("mog-dense", ctx).retrieve("porcelain from Meissen", 1)
    finally:
        ctx.settings.mog.default_router = old
    assert items and all(it.level == ctx.settings.tuning.mog.fixed_level for it in items)
    assert all(it.breakdown["fixed_level"] == ctx.settings.tuning.mog.fixed_level for it in items)
    # the Meissen sentence is level-1 chunk tA-c1-4, returned as its fixed-level container
    assert dense[0].path[0] == "tA-c1-4" and dense[0].query == "retrieval/mog_dense"
    assert (
        dense[0].id
        == {1: "tA-c1-4", 2: "tA-c2-2", 3: "tA-c3-1"}[ctx.settings.tuning.mog.fixed_level]
    )


def _piece_hits(graph, query: str, qvec, seed_index: str) -> dict:
    """``{corpus: {index: [(piece, score)]}}`` straight from the indexes (every hit)."""
    out: dict = {}
    if seed_index in ("bm25", "hybrid"):
        for r in _own_hits(graph, "piece_text", _FULLTEXT, q=fulltext_query(query)):
            out.setdefault(r["corpus"], {}).setdefault("bm25", []).append((r["id"], r["score"]))
    if seed_index in ("vector", "hybrid"):
        for r in _own_hits(graph, "piece_embedding", _VECTOR, qv=[float(x) for x in qvec]):
            out.setdefault(r["corpus"], {}).setdefault("vector", []).append((r["id"], r["score"]))
    return out


_MOGG_PLANS = [((0.1, 0.8, 0.3), 2), ((0.9, 0.0, 0.0), 1), ((0.2, 0.3, 0.6), 3)]
_SEED_INDEXES = ["bm25", "vector", "hybrid"]
_HOPS = ["similar", "similar+next"]
_CAPS = [14, 1000]
# (question, plan, seed index, hops, cap) as indexes into the lists above: a covering grid
# rather than the full product (144 cases, a minute and a half of the suite). Each router plan
# meets every (hops, cap) pair, which fixes the radius and the walk the Cypher renders, and every
# value of each parameter meets every value of every other; a mismatch between the query and its
# reference is a property of such a pair, not of one question's text.
_MOGG_GRID = [
    (0, 0, 0, 0, 0),
    (1, 0, 0, 0, 1),
    (2, 0, 1, 1, 0),
    (3, 0, 2, 1, 1),
    (0, 1, 2, 0, 0),
    (1, 1, 1, 0, 1),
    (2, 1, 0, 1, 0),
    (3, 1, 1, 1, 1),
    (3, 2, 0, 0, 0),
    (2, 2, 2, 0, 1),
    (1, 2, 2, 1, 0),
    (0, 2, 1, 1, 1),
]


def test_mogg_grid_covers_every_pair_and_every_walk():
    """The grid below keeps the promise its comment makes."""
    sizes = [len(QUESTIONS), len(_MOGG_PLANS), len(_SEED_INDEXES), len(_HOPS), len(_CAPS)]
    for a, b in itertools.combinations(range(5), 2):
        pairs = {(row[a], row[b]) for row in _MOGG_GRID}
        assert len(pairs) == sizes[a] * sizes[b], (a, b)
    assert len({(row[1], row[3], row[4]) for row in _MOGG_GRID}) == 3 * 2 * 2


@pytest.mark.parametrize(
    "question,w,g_r,seed_index,hops,cap",
    [
        (QUESTIONS[q], *_MOGG_PLANS[p], _SEED_INDEXES[s], _HOPS[h], _CAPS[c])
        for q, p, s, h, c in _MOGG_GRID
    ],
)
def test_mogg_cypher_equals_python_reference(world, question, w, g_r, seed_index, hops, cap):
    """Cap 14: groups fill within one hop, so the seed limit, the cap and the cross-group
    trimming all bite; cap 1000: no group fills, and every path up to the radius decides the
    groups."""
    ctx, data = world
    cfg = ctx.settings.tuning.mog
    old = (cfg.mogg_seeds, cfg.mogg_group_tokens, cfg.mogg_seed_index, cfg.mogg_hops)
    cfg.mogg_seeds, cfg.mogg_group_tokens, cfg.mogg_seed_index = 5, cap, seed_index
    cfg.mogg_hops = hops
    qvec = ctx.embedder.embed([question])[0]
    try:
        plans = [CorpusPlan("tA", w, g_r), CorpusPlan("tB", w, g_r)]
        strat = MoGGStrategy(ctx)
        got = strat.run(question, 3, plans, qvec)
        radius = mogg_mod.radius_needed(plans, cfg.zero_weight)
        want = mogg_reference_select(
            _piece_hits(ctx.graph, question, qvec, seed_index),
            data["pieces"],
            data["edges_with_next"] if hops == "similar+next" else data["edges"],
            plans,
            seeds=cfg.mogg_seeds,
            k_r=max(cfg.k_r, 3),
            cap=cfg.mogg_group_tokens,
            cand=3 * cfg.mogg_candidates_factor,
            k=3,
            radius=radius,
            normalise=cfg.normalise,
        )
    finally:
        cfg.mogg_seeds, cfg.mogg_group_tokens, cfg.mogg_seed_index, cfg.mogg_hops = old
    assert want
    assert strat.last_query == mogg_mod.query_name(radius, hops)
    assert [(it.id, it.path) for it in got] == [(c, m) for c, _, m in want]
    assert [it.score for it in got] == pytest.approx([s for _, s, _ in want], abs=1e-9)
    for it in got:  # members are unique, within the cap (or the centre alone), centre included
        assert len(set(it.path)) == len(it.path) and it.id in it.path
    every = [m for it in got for m in it.path]
    assert len(every) == len(set(every)), "a piece appears in two returned groups"


@pytest.mark.parametrize("g_r", [1, 2])
def test_mogg_builds_one_group_per_candidate(world, g_r):
    """Step 5 builds one group per candidate. At router level 1 the group is the centre alone
    and the walk is skipped; the walking branch, filtered out, must not add an empty group
    too (an aggregation over no rows still returns a row), which only the order of the rows
    kept out of the results."""
    ctx, _ = world
    question = "Which river flows through Dresden and Hamburg?"
    qvec = ctx.embedder.embed([question])[0]
    plan = CorpusPlan("tA", (0.6, 0.4, 0.0) if g_r == 1 else (0.4, 0.6, 0.0), g_r)
    params = MoGGStrategy(ctx).params(question, 3, [plan], qvec)
    text = mogg_mod.render_query(1)
    upto_step6 = text[: text.index("// Step 6")]
    rows = ctx.graph.read_raw(
        upto_step6 + "UNWIND groups AS x RETURN x.cd.c AS c, size(x.group) AS n", **params
    )
    assert rows and len(rows) == len({r["c"] for r in rows})
    assert all(r["n"] >= 1 for r in rows)
    if g_r == 1:
        assert all(r["n"] == 1 for r in rows)


def test_mogg_seed_sources_differ(world):
    """The vector seeds are not the BM25 seeds in disguise: a query sharing no word with the
    text finds nothing lexically but still finds groups through the piece vector index."""
    ctx, _ = world
    cfg = ctx.settings.tuning.mog
    old = cfg.mogg_seed_index
    plans = [CorpusPlan("tA", (0.0, 1.0, 0.0), 2)]
    try:
        cfg.mogg_seed_index = "bm25"
        lexical = MoGGStrategy(ctx).run("chinaware manufacturing", 2, plans)
        cfg.mogg_seed_index = "vector"
        dense = MoGGStrategy(ctx).run("chinaware manufacturing", 2, plans)
    finally:
        cfg.mogg_seed_index = old
    assert lexical == [] and dense


def test_mogg_groups_grow_with_radius(world):
    ctx, _ = world
    sizes = []
    for g in (1, 2, 3):
        w = tuple(1.0 if i == g else 0.0 for i in (1, 2, 3))
        items = MoGGStrategy(ctx).run("river Elbe Dresden", 1, [CorpusPlan("tA", w, g)])
        sizes.append(len(items[0].path))
    assert sizes[0] == 1 and sizes[0] <= sizes[1] <= sizes[2] and sizes[2] > 1


def test_router_training_registers_and_mog_then_uses_it(world, tmp_path):
    import json

    from kg_platform.retrieval.explain import SUBGRAPH_QUERY, browser_snippet

    train_router = pytest.importorskip("kg_platform_lab.routers.training").train_router

    ctx, _ = world
    ctx.corpus = "tA"
    rows = [
        {"question": q, "answer": a}
        for q, a in [
            ("Which river flows through Dresden?", "Elbe"),
            ("What is the capital of Saxony?", "Dresden"),
            ("Where is the port on the Elbe?", "Hamburg"),
            ("Which sea borders Germany?", "North Sea"),
            ("Where was porcelain made near Dresden?", "Meissen"),
            ("What does Hamburg's port handle?", "containers"),
            ("Which countries border the North Sea?", "Denmark"),
            ("What architecture is Dresden famous for?", "baroque"),
        ]
    ]
    dataset = tmp_path / "tiny.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows))
    training = pytest.importorskip("kg_platform_lab.settings").RouterTrainingSettings(max_epochs=30)
    old = ctx.settings.segment.levels
    ctx.settings.segment.levels = 3
    try:
        out = train_router(ctx, dataset, "mog", echo=lambda s: None, training=training)
        assert sum(out["chosen_level_distribution"].values()) == len(rows)
        stored = ctx.graph.read("retrieval/mog_router_latest", corpus="tA", kind="mog")
        assert stored and stored[0]["id"] == out["id"]
        assert (
            json.loads(stored[0]["metrics"])["n_train"] + json.loads(stored[0]["metrics"])["n_val"]
            == 8
        )
        items = get_strategy("mog", ctx).retrieve("Which river flows through Dresden?", 2)
        assert items and "fixed_level" not in items[0].breakdown
        assert "default_router" not in items[0].breakdown  # the corpus's own router wins
        from kg_platform.retrieval.strategies.router import router_for

        assert router_for(ctx.graph, ctx.settings, "tA", "mog", 3)[1] == "corpus"
        assert sum(items[0].breakdown[f"w_L{g}"] for g in (1, 2, 3)) > 0
    finally:
        ctx.settings.segment.levels = old
        ctx.corpus = None
        ctx.graph.write_raw("MATCH (r:Router) DETACH DELETE r")
        ctx.forget_routers()  # the shared context must not keep serving the deleted router
    rows = ctx.graph.read(SUBGRAPH_QUERY, ids=[items[0].id, *items[0].path])
    assert {r["n"]["id"] for r in rows} >= {items[0].id, items[0].path[0]}
    assert ":param ids =>" in browser_snippet(items)


def test_propagate_matches_the_chunk_layer_cosines(world):
    import numpy as np

    from kg_platform.retrieval.strategies.propagate import PropagateStrategy

    ctx = world[0].for_corpus("tA")  # one corpus: its own indexes (every corpus: EveryCorpus)
    question = "porcelain made in Saxony"
    # the pieces have vectors too: P weighs 0 so only the chunk layer counts
    items = PropagateStrategy(ctx, lam={"C": 0.5, "P": 0.0, "D": 0.2, "I": 0.1, "T": 0.0}).retrieve(
        question, 4
    )
    rows = ctx.graph.read_raw("MATCH (c:L1 {corpus: 'tA'}) RETURN c.id AS id, c.embedding AS e")
    q = ctx.embedder.embed([question])[0]
    cos = {r["id"]: float(np.dot(q, np.asarray(r["e"]))) for r in rows}
    want = sorted(cos, key=lambda i: -cos[i])[:4]  # only the chunk layer exists in this graph
    assert items[0].id == want[0] and len(items) == 4
    for it in items:  # S(c) = lam_C * cos(q, c); the index stores float32 (tolerance)
        assert it.score == pytest.approx(0.5 * cos[it.id], abs=5e-3)
    floor = min(cos[it.id] for it in items)
    assert all(cos[c] <= floor + 5e-3 for c in cos if c not in {it.id for it in items})
    assert items[0].breakdown["lam_C"] == 0.5 and items[0].query == "retrieval/propagate_chunks"


def test_propagate_lexical_layer_is_normalised_bm25(world):
    """Layer T = BM25 of level-1 chunks divided by the best hit's; alone it ranks like the index."""
    from kg_platform.retrieval.strategies.propagate import PropagateStrategy

    ctx = world[0].for_corpus("tA")
    question = "porcelain Meissen"
    rows = ctx.graph.read_raw(
        "CALL db.index.fulltext.queryNodes($ix + 'chunk_text_l1', $q, {limit: 10}) "
        "YIELD node, score RETURN node.id AS id, score",
        ix=ctx.index_prefix(),
        q=fulltext_query(question),
    )
    lam = {"C": 0.0, "P": 0.0, "D": 0.0, "I": 0.0, "T": 1.0}
    items = PropagateStrategy(ctx, lam=lam).retrieve(question, len(rows))
    assert [it.id for it in items] == [r["id"] for r in rows]
    assert [it.score for it in items] == pytest.approx(
        [r["score"] / rows[0]["score"] for r in rows]
    )
    assert items[0].breakdown["rank_T"] == 1.0
    rrf = PropagateStrategy(ctx, lam=lam, aggregate="rrf").retrieve(question, 2)
    assert rrf[0].id == rows[0]["id"] and rrf[0].score == pytest.approx(1 / 61)
    # text with no searchable word: the lexical layer is skipped, the vector layers still answer
    assert PropagateStrategy(ctx).retrieve("???", 2)


def test_profile_records_and_profiles_the_strategy_cypher(world):
    """`kgp lab bench retrieve --profile`: the statements a strategy ran, re-run under PROFILE."""
    profile = pytest.importorskip("kg_platform_lab.bench.profile")
    RecordingGraph, profile_calls = profile.RecordingGraph, profile.profile_calls

    ctx, _ = world
    recorder = RecordingGraph(ctx.graph)
    rctx = RetrievalContext(
        graph=recorder, embedder=ctx.embedder, settings=ctx.settings, corpus="tA"
    )
    items = get_strategy("propagate", rctx).retrieve("river Elbe Dresden", 3)
    MoGGStrategy(rctx).run("river Elbe Dresden", 2, [CorpusPlan("tA", (0.0, 1.0, 0.0), 2)])
    # the corpus has its own indexes, so no over-fetch to size; MoGG reads its documents'
    # median length (auto hops) once per context
    assert [name for name, _ in recorder.calls] == [
        "retrieval/propagate_chunks",
        "retrieval/median_source_tokens",
        "retrieval/mogg_r1",
    ]
    prof = profile_calls(ctx.graph, recorder.calls)
    assert prof.rows == len(items) + 1 + 2  # PROFILE returns the same rows as the real run
    assert prof.db_hits > 0 and prof.db_hits == sum(prof.operators.values())
    assert prof.top(1)[0][1] > 0 and prof.to_dict()["statements"] == prof.statements


def test_router_is_looked_up_once_per_context_and_again_after_forget(world):
    """The router lookup is a round trip of its own: a context makes it once per corpus and kind,
    and again after :meth:`RetrievalContext.forget_routers` or a change of the default-router
    setting (tests and long-lived callers change those behind the context's back)."""
    RecordingGraph = pytest.importorskip("kg_platform_lab.bench.profile").RecordingGraph

    ctx, _ = world
    recorder = RecordingGraph(ctx.graph)
    rctx = RetrievalContext(
        graph=recorder, embedder=ctx.embedder, settings=ctx.settings, corpus="tA"
    )

    def lookups() -> int:
        return sum(name == "retrieval/mog_router_latest" for name, _ in recorder.calls)

    for question in ("Which river flows through Dresden?", "porcelain from Meissen"):
        get_strategy("mog", rctx).retrieve(question, 2)
        get_strategy("mogg", rctx).retrieve(question, 2)
    assert lookups() == 2  # one per kind
    rctx.forget_routers()
    get_strategy("mog", rctx).retrieve("porcelain from Meissen", 2)
    assert lookups() == 3
    old = ctx.settings.mog.default_router
    ctx.settings.mog.default_router = "none"
    try:
        items = get_strategy("mog", rctx).retrieve("porcelain from Meissen", 2)
    finally:
        ctx.settings.mog.default_router = old
    assert lookups() == 4 and all("fixed_level" in it.breakdown for it in items)


def test_propagate_queries_only_the_layers_it_weighs(world):
    """A layer weighted 0 neither scores nor proposes candidates: its index call is not made (the
    piece layer, off by default, is the largest index). C is always asked: it is every
    candidate's base score."""
    from kg_platform.retrieval.strategies.propagate import PropagateStrategy

    ctx = world[0].for_corpus("tA")
    assert PropagateStrategy(ctx).queried_layers() == ["C", "D", "I", "T"]  # P weighs 0
    lam = {"C": 0.0, "P": 0.2, "D": 0.0, "I": 0.0, "T": 0.0}
    only_p = PropagateStrategy(ctx, lam=lam)
    assert only_p.queried_layers() == ["C", "P"]
    items = only_p.retrieve("river Elbe Dresden", 3)
    assert items and all(
        {k for k in it.breakdown if k.startswith("cos_")} <= {"cos_C", "cos_P"} for it in items
    )
    assert any("cos_P" in it.breakdown for it in items)


def test_index_fetch_follows_the_corpus_share(world):
    """Over-fetch only as much as the corpus's share of the chunks needs, within [need, ceiling]."""
    ctx, _ = world
    share = ctx.graph.read("retrieval/corpus_share", corpus="tA")[0]["share"]
    assert share == pytest.approx(11 / 18)  # tA: 6 + 3 + 2 chunks of 6 + 3 + 2 + 4 + 2 + 1
    # corpora with their own indexes need no over-fetch: every hit is theirs
    assert ctx.index_fetch(5, 200, ["tA"]) == 5 and ctx.index_fetch(5, 200, ["tA", "tB"]) == 5
    # a corpus searched through shared indexes (a graph not yet through `kgp init`) does
    ctx._prefixes.update({"tA": "", "tB": ""})
    assert ctx.index_fetch(5, 200) == 5  # nothing filtered
    assert ctx.index_fetch(5, 200, ["tA"]) == int(5 * 4 / share) + 1
    assert ctx.index_fetch(100, 200, ["tA"]) == 200  # capped at the ceiling
    assert ctx.index_fetch(5, 200, ["tA", "tB"]) == 200  # several corpora: the ceiling
    assert ctx.graph.read("retrieval/corpus_share", corpus="nope")[0]["share"] == 0.0


def test_fit_weights_searches_present_layers_on_the_train_part(world):
    """`kgp lab router fit-propagation`: fit on the train questions only; absent layers stay 0."""
    from kg_platform.retrieval.strategies.propagate import LAYERS, fit_weights, rank_with

    ctx = world[0].for_corpus("tA")
    questions = ["porcelain Meissen Saxony", "Hamburg port containers Asia"]
    targets = []
    for q in questions:  # the lexical layer's best chunk is the one each question asks for
        rows = ctx.graph.read_raw(
            "CALL db.index.fulltext.queryNodes($ix + 'chunk_text_l1', $q, {limit: 1}) YIELD node "
            "RETURN node.id AS id",
            ix=ctx.index_prefix(),
            q=fulltext_query(q),
        )
        targets.append(rows[0]["id"])

    def recall(i, items):
        return 1.0 if items and items[0].id == targets[i] else 0.0

    lam, score, cached = fit_weights(ctx, questions, recall, 3, train=[0])
    assert score == 1.0 and set(lam) == set(LAYERS) and len(cached) == 2
    assert lam["D"] == 0.0  # no distilled node in this graph: not searched
    assert recall(0, rank_with(cached[0], lam, "wsum")) == 1.0


def test_fit_candidates_are_asked_in_each_questions_scope(world):
    """Document QA fits each question inside its own paper, as `kgp lab eval` scopes it; the
    context's own scope is restored afterwards."""
    from kg_platform.retrieval.strategies.propagate import grid_scores, layer_candidates

    ctx = world[0].for_corpus("tB")
    questions = ["Which river flows through Dresden?", "Which river flows through Dresden?"]
    cached = layer_candidates(ctx, questions, 3, scopes=[["tB-src"], ["tA-src"]])
    assert ctx.sources is None
    assert cached[0] and {it.source_id for it in cached[0]} == {"tB-src"}
    assert cached[1] == []  # the second question's scope holds no source of this corpus

    def in_tb(i, items):
        return 1.0 if items and items[0].source_id == "tB-src" else 0.0

    ranked = grid_scores(cached, in_tb, train=[0])
    assert ranked[0][1] == 1.0 and all(a[1] >= b[1] for a, b in zip(ranked, ranked[1:]))


def test_corpus_without_router_uses_the_shipped_default(world):
    """No router trained for tA: `mog` and `mogg` use the default router shipped in the package
    and report it (breakdown ``default_router``, ``router_level``); switched off, they fall back
    to the fixed level, and the result says so."""
    from kg_platform.retrieval.strategies.mog import choose_level
    from kg_platform.retrieval.strategies.router import load_default_router, router_for

    ctx, _ = world
    cfg = ctx.settings.tuning.mog
    question = "Which river flows through Dresden?"
    qvec = ctx.embedder.embed([question])[0]
    for name, n in (("mog", ctx.settings.segment.levels), ("mogg", cfg.mogg_levels)):
        router, source = router_for(ctx.graph, ctx.settings, "tA", name, n, len(qvec))
        assert source == "default" and router is load_default_router(ctx.settings, name, n)
        level = choose_level(router.weights(qvec), cfg.zero_weight)
        ctx.corpus = "tA"
        try:
            items = get_strategy(name, ctx).retrieve(question, 2)
            old = ctx.settings.mog.default_router
            ctx.settings.mog.default_router = "none"
            try:
                fixed = get_strategy(name, ctx).retrieve(question, 2)
                assert router_for(ctx.graph, ctx.settings, "tA", name, n)[1] == "fixed"
            finally:
                ctx.settings.mog.default_router = old
        finally:
            ctx.corpus = None
        assert items and all(it.breakdown.get("default_router") == 1.0 for it in items)
        assert all(it.breakdown["router_level"] == level for it in items)
        assert all("fixed_level" not in it.breakdown for it in items)
        assert fixed and all("default_router" not in it.breakdown for it in fixed)
        assert all("fixed_level" in it.breakdown for it in fixed)


def test_mogg_ignores_hop_ranges_far_below_the_routers_favourite(world):
    """`mog.mogg_level_skip`: a hop range weighted below that share of the largest weight is
    neither scored nor walked (the radius shrinks); the router level g_r is always kept."""
    ctx, _ = world
    cfg = ctx.settings.tuning.mog
    plan = CorpusPlan("tA", (0.6, 0.1, 0.25, 0.05), 1)
    assert plan.without_low_weights(0.3).w == (0.6, 0.0, 0.25, 0.0)
    assert plan.without_low_weights(0.0) == plan
    assert CorpusPlan("tA", (0.6, 0.1, 0.05, 0.01), 4).without_low_weights(0.3).w == (
        0.6,
        0.0,
        0.0,
        0.01,
    )
    assert mogg_mod.radius_needed([plan], cfg.zero_weight) == 3
    assert mogg_mod.radius_needed([plan.without_low_weights(0.3)], cfg.zero_weight) == 2
    ctx.corpus = "tA"
    try:
        strat = MoGGStrategy(ctx)
        assert strat.retrieve("Which river flows through Dresden?", 2)
    finally:
        ctx.corpus = None
    (used,) = strat.last_plans
    top = max(used.w)
    assert all(w == 0.0 or w >= cfg.mogg_level_skip * top for w in used.w)
    radius = mogg_mod.radius_needed(strat.last_plans, cfg.zero_weight)
    assert strat.last_query == mogg_mod.query_name(radius, strat.hops(strat.last_plans))


def test_mogg_auto_hops_follow_next_in_long_documents_only(world):
    """`mog.mogg_hops = auto`: NEXT hops too when the median searched document reaches
    `mogg_next_min_tokens` (the scope's documents, else a sample of each corpus's)."""
    ctx, _ = world
    cfg = ctx.settings.tuning.mog
    assert cfg.mogg_hops == "auto"
    words = {name: sum(len(t.split()) for t in texts) for name, texts in TEXTS.items()}
    assert words["tA"] > words["tB"]
    plans = [CorpusPlan("tA", (0.2, 0.8, 0.0), 2)]
    assert ctx.median_source_tokens(["tA"]) == words["tA"]
    assert ctx.median_source_tokens(["tA", "tB"]) == words["tB"]  # percentileDisc: the lower
    old = cfg.mogg_next_min_tokens
    try:
        cfg.mogg_next_min_tokens = words["tA"] + 1  # tA's document counts as short
        assert MoGGStrategy(ctx).hops(plans) == "similar"
        cfg.mogg_next_min_tokens = words["tA"]  # ... and now as long
        strat = MoGGStrategy(ctx)
        assert strat.hops(plans) == "similar+next"
        strat.run("Which river flows through Dresden?", 2, plans)
        assert strat.last_query.startswith("retrieval/mogg_next_r")
        # a scope is judged by its own documents only: tB's is short
        scoped = RetrievalContext(
            graph=ctx.graph, embedder=ctx.embedder, settings=ctx.settings, sources=["tB-src"]
        )
        assert scoped.median_source_tokens(["tA", "tB"]) == words["tB"]
        assert MoGGStrategy(scoped).hops(plans) == "similar"
    finally:
        cfg.mogg_next_min_tokens = old
