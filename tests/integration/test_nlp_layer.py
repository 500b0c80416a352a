"""The distilled layer without an LLM (issue 32): the NLP extractor's output on a small text,
ingestion writing Entity / MENTIONED_IN / RELATES with ``by: 'nlp'``, a changed source losing the
mentions it no longer has, the layer built by default over short passages and not over long
documents, one node per normalised name on real documents, ``kgp distill --extractor nlp``
filling a corpus ingested without the layer, and the ``entity`` strategy
finding a paragraph that only a shared entity leads to. Real Neo4j, real spaCy pipeline."""

from __future__ import annotations

import pytest

from kg_platform.distilling.nlp import extract_texts, load_pipeline, query_mentions
from kg_platform.distilling.nlp import version as nlp_version
from kg_platform.errors import ConfigError
from tests.support.data import DOCUMENTS
from tests.support.passages import ENTITY_PASSAGES

pytestmark = pytest.mark.integration

CORPUS = "nlp-test"


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


def _count(graph, query: str, **params) -> int:
    return int(graph.read_raw(query, **params)[0][0])


def test_extractor_types_entities_keeps_recurring_concepts_and_reads_triples(nlp):
    text = (
        "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor. "
        "Castaing-Taylor was born in Liverpool. The sheepherders drive the sheep to Montana, "
        "and the sheepherders sleep in tents. A camera follows them. "
        "Ilisa Barbash and Lucien Castaing-Taylor live in Montana."
    )
    out = extract_texts(nlp, [text], ["s1"])[0]
    kinds = {m.key: m.type for m in out.mentions}
    assert kinds["lucien castaing taylor"] == "person"
    assert kinds["liverpool"] == "place"
    assert kinds["montana"] == "place"
    assert kinds["sheepherder"] == "concept"  # twice in the source
    assert "camera" not in kinds  # once: not a concept
    triples = {(r["src"], r["type"], r["dst"]) for r in out.relations}
    assert ("lucien castaing taylor", "direct", "sweetgrass") in triples
    assert ("castaing taylor", "born_in", "liverpool") in triples
    assert ("ilisa barbash", "co_occurs", "lucien castaing taylor") in triples
    # a concept counts per source: the same text split over two sources recurs in neither
    split = extract_texts(nlp, ["The sheepherders rest.", "The sheepherders sing."], ["s1", "s2"])
    assert all("sheepherder" not in {m.key for m in e.mentions} for e in split)
    # a question keeps every noun phrase, and a disambiguated title's bare name
    keys = {m.key for m in query_mentions(nlp, "Where was the director of Sweetgrass (film) born?")}
    assert {"director", "sweetgrass"} <= keys
    # a chunk's source title is its subject; a file name is not
    titled = extract_texts(
        nlp,
        ["It was shot in Montana.", "It was shot in Montana."],
        titles=["Sweetgrass (film)", "notes.md"],
    )
    assert "sweetgrass" in {m.key for m in titled[0].mentions}
    assert {m.key for m in titled[1].mentions} == {"montana"}


DOC_V1 = (
    "# Curie\n\nMarie Curie was born in Warsaw. Marie Curie moved to Paris in 1891.\n\n"
    "Pierre Curie worked with Marie Curie at the University of Paris.\n"
)
DOC_V2 = "# Curie\n\nMarie Curie was born in Warsaw. She studied physics.\n"
DOC_OTHER = "# Chopin\n\nFrederic Chopin grew up in Warsaw and later lived in Paris.\n"


def _mentioned(graph, aliases: bool = True) -> set[str]:
    """Normalised names of the mentioned entities, their resolved aliases included (a title
    "Chopin" and the text's "Frederic Chopin" may be one entity)."""
    from kg_platform.distilling.common import normalise_name

    names: set[str] = set()
    for r in graph.read_raw(
        "MATCH (e:Entity {corpus: $c})-[m:MENTIONED_IN]->(:Chunk) "
        "RETURN DISTINCT e.key AS key, e.aliases AS aliases",
        c=CORPUS,
    ):
        names.add(r["key"])
        if aliases:
            names.update(normalise_name(a) for a in r["aliases"] or [])
    return names


def test_ingestion_writes_nlp_entities_and_a_changed_source_loses_stale_mentions(
    clean_graph, settings, embedder, tmp_path
):
    from kg_platform.ingest import ingest_paths

    s = settings.model_copy(
        update={
            "distill": settings.distill.model_copy(
                update={"extractor": "nlp", "nlp_on_ingest": True, "relations": True}
            )
        }
    )
    doc, other = tmp_path / "curie.md", tmp_path / "chopin.md"
    doc.write_text(DOC_V1)
    other.write_text(DOC_OTHER)
    report = ingest_paths(clean_graph, s, [tmp_path], CORPUS, embedder=embedder)
    assert report.status == "completed", report
    assert report.counts["entity_mentions"] > 0 and report.timings["entities"] > 0
    keys = _mentioned(clean_graph)
    assert {"marie curie", "pierre curie", "warsaw", "paris", "frederic chopin"} <= keys
    by = {
        r["by"]
        for r in clean_graph.read_raw(
            "MATCH (e:Entity)-[m:MENTIONED_IN]->() RETURN DISTINCT m.by AS by, e.by AS eby "
            "UNION MATCH ()-[r:RELATES]->() RETURN DISTINCT r.by AS by, r.by AS eby"
        )
    }
    assert by == {"nlp"}
    assert _count(clean_graph, "MATCH ()-[r:RELATES {by: 'nlp'}]->() RETURN count(r)") > 0
    # Warsaw is one node shared by both sources: the link the entity strategy walks
    assert (
        _count(
            clean_graph,
            "MATCH (e:Entity {key: 'warsaw'})-[:MENTIONED_IN]->(c:Chunk) "
            "RETURN count(DISTINCT c.source_id)",
        )
        == 2
    )
    # every chunk is marked done: a second run has nothing to do and changes nothing
    before = _count(clean_graph, "MATCH ()-[m:MENTIONED_IN]->() RETURN count(m)")
    again = ingest_paths(clean_graph, s, [tmp_path], CORPUS, embedder=embedder)
    assert again.counts.get("entity_chunks", 0) == 0
    assert _count(clean_graph, "MATCH ()-[m:MENTIONED_IN]->() RETURN count(m)") == before

    doc.write_text(DOC_V2)
    ingest_paths(clean_graph, s, [tmp_path], CORPUS, embedder=embedder)
    keys = _mentioned(clean_graph, aliases=False)
    assert "pierre curie" not in keys and "university of paris" not in keys
    keys = _mentioned(clean_graph)
    assert {"marie curie", "warsaw", "paris", "frederic chopin"} <= keys  # Paris: Chopin's
    assert _count(clean_graph, "MATCH (e:Entity {key: 'pierre curie'}) RETURN count(e)") == 0
    assert (
        _count(
            clean_graph,
            "MATCH ()-[r:RELATES]->() WHERE r.evidence CONTAINS 'Pierre' RETURN count(r)",
        )
        == 0
    )


def test_auto_builds_the_layer_over_passages_and_skips_long_documents(
    clean_graph, settings, embedder, tmp_path
):
    """``distill.nlp_on_ingest = auto`` (the default): a pool of short passages gets the
    entities the default retrieval walks there; a long document, where the default path does
    not read them, gets none, and the report says how to build them."""
    from kg_platform.ingest import ingest_paths
    from kg_platform.ingest.session import ENTITIES_SKIPPED_FOR_DOCUMENTS

    assert type(settings.distill).model_fields["nlp_on_ingest"].default == "auto"
    s = settings.model_copy(
        update={
            "distill": settings.distill.model_copy(
                update={"extractor": "nlp", "nlp_on_ingest": "auto"}
            )
        }
    )
    passages, document = tmp_path / "passages", tmp_path / "document"
    passages.mkdir()
    document.mkdir()
    for i, line in enumerate(ENTITY_PASSAGES):
        (passages / f"p{i}.txt").write_text(line + "\n")
    report = ingest_paths(clean_graph, s, [passages], "nlp-passages", embedder=embedder)
    assert report.counts.get("entity_mentions", 0) > 0, report.summary()
    assert report.entities.startswith("entities (NLP extractor): 3 chunks read")
    assert report.entities in report.summary()
    assert _count(
        clean_graph, "MATCH (e:Entity {corpus: 'nlp-passages', key: 'liverpool'}) RETURN count(e)"
    )
    # one source of many paragraphs, each naming people and places the layer would find
    paragraphs = [
        f"Marie Curie wrote letter {i} in Warsaw to Pierre Curie, who was working in Paris on "
        f"radioactivity; the letter describes experiment {i} at the University of Paris and "
        f"the polonium samples they measured together during that year."
        for i in range(40)
    ]
    (document / "letters.md").write_text("# Letters\n\n" + "\n\n".join(paragraphs) + "\n")
    report = ingest_paths(clean_graph, s, [document], "nlp-document", embedder=embedder)
    assert report.status == "completed", report.summary()
    assert report.entities == ENTITIES_SKIPPED_FOR_DOCUMENTS
    assert ENTITIES_SKIPPED_FOR_DOCUMENTS in report.summary()
    assert "entity_mentions" not in report.counts
    assert _count(clean_graph, "MATCH (e:Entity {corpus: 'nlp-document'}) RETURN count(e)") == 0
    # the setting's word is final: on builds them for the document too
    on = s.model_copy(update={"distill": s.distill.model_copy(update={"nlp_on_ingest": True})})
    report = ingest_paths(clean_graph, on, [document], "nlp-document", embedder=embedder)
    assert report.counts.get("entity_mentions", 0) > 0, report.summary()


def test_distill_extractor_nlp_fills_a_corpus_and_names_are_unique(clean_graph, settings, embedder):
    """Real documents ingested without the layer, then ``kgp distill --extractor nlp`` (the
    SDK's ``distill``): one node per normalised name in the corpus."""
    from kg_platform.ingest import ingest_paths
    from kg_platform.sdk.platform import KnowledgePlatform

    off = settings.model_copy(
        update={"distill": settings.distill.model_copy(update={"nlp_on_ingest": False})}
    )
    ingest_paths(clean_graph, off, [DOCUMENTS / "md"], CORPUS, embedder=embedder)
    assert _count(clean_graph, "MATCH (e:Entity) RETURN count(e)") == 0
    # a pipeline that does not load stops the step with the install hint (parsed in a child
    # process, the failure comes back here), and nothing is marked done
    broken = settings.model_copy(
        update={"distill": settings.distill.model_copy(update={"nlp_model": "/no/such/pipeline"})}
    )
    with pytest.raises(ConfigError, match="cannot be loaded") as err:
        KnowledgePlatform(broken, graph=clean_graph, embedder=embedder).distill(
            CORPUS, extractor="nlp"
        )
    assert "pip install" in (err.value.hint or "")
    assert (
        _count(clean_graph, "MATCH (c:Chunk) WHERE c.entities_v IS NOT NULL RETURN count(c)") == 0
    )
    kp = KnowledgePlatform(settings, graph=clean_graph, embedder=embedder)
    report = kp.distill(CORPUS, extractor="nlp")
    entry = report.results["entities"]
    assert report.extractor == "nlp" and entry["chunks"] > 0 and entry["written"] > 0
    assert not report.skipped
    dupes = clean_graph.read_raw(
        "MATCH (e:Entity {corpus: $c}) WITH e.key AS key, count(*) AS n WHERE n > 1 RETURN key, n",
        c=CORPUS,
    )
    assert dupes == [], dupes
    pending = _count(
        clean_graph,
        "MATCH (c:Chunk {corpus: $c}) WHERE c.level = 1 AND coalesce(c.entities_v, '') <> "
        "$marker RETURN count(c)",
        c=CORPUS,
        marker=nlp_version(settings.distill.relations),
    )
    assert pending == 0


def test_entity_strategy_reaches_a_paragraph_only_a_shared_entity_leads_to(
    clean_graph, settings, embedder, tmp_path
):
    """The second hop of "where was the director of Sweetgrass born?": the paragraph about the
    director never names the film; only the director's entity links the two."""
    from kg_platform.ingest import ingest_paths
    from kg_platform.retrieval.base import RetrievalContext, get_strategy
    from kg_platform.retrieval.explain import explain_lines

    docs = {
        "film.md": "# Sweetgrass\n\nSweetgrass is a documentary film directed by Lucien "
        "Castaing-Taylor. Sweetgrass follows sheepherders in Montana.\n",
        "director.md": "# Lucien Castaing-Taylor\n\nLucien Castaing-Taylor was born in "
        "Liverpool. Lucien Castaing-Taylor teaches visual anthropology.\n",
        "other.md": "# Ducks\n\nDucks are waterbirds. Mallards feed on plants in ponds.\n",
        "more.md": "# Rome\n\nRome is the capital of Italy. The Tiber flows through Rome.\n",
    }
    for name, text in docs.items():
        (tmp_path / name).write_text(text)
    s = settings.model_copy(
        update={
            "distill": settings.distill.model_copy(
                update={"extractor": "nlp", "nlp_on_ingest": True}
            ),
        }
    ).with_tuning(
        # one chunk seed only: the director's paragraph must come through the entity
        entity_graph={"chunk_seeds": 1}
    )
    ingest_paths(clean_graph, s, [tmp_path], CORPUS, embedder=embedder)
    ctx = RetrievalContext(clean_graph, embedder, s, corpus=CORPUS)
    items = get_strategy("entity", ctx).retrieve("Where was the director of Sweetgrass born?", 5)
    titles = [it.source_title for it in items]
    assert "Lucien Castaing-Taylor" in titles, titles
    assert "Ducks" not in titles and "Rome" not in titles  # no entity path, no mass
    director = items[titles.index("Lucien Castaing-Taylor")]
    assert any(k.startswith(("entity:", "seed:")) and "Castaing" in k for k in director.breakdown)
    assert director.breakdown.get("ppr_t3", 0.0) > 0  # reached on the walk's third step
    entity_ids = {r["id"] for r in clean_graph.read_raw("MATCH (e:Entity) RETURN e.id AS id")}
    assert entity_ids & set(director.path)
    assert any("entity hops:" in line and "Castaing" in line for line in explain_lines(items))


def test_the_entity_layer_does_not_depend_on_the_corpus_name(
    clean_graph, settings, embedder, tmp_path
):
    """The same passages under two corpus names get the same entities: names, types and the
    sources each is mentioned in. The NLP step keeps the first mention of a name it meets in a
    batch, and batches are ordered; ordered by source id (a hash of the corpus name and the
    uri), the entity layer changed with the corpus's name, and so did the entity walk's recall
    (lab/results/2026-12-03/corpus-name)."""
    from kg_platform.ingest import ingest_paths
    from kg_platform.ingest.ids import source_id
    from tests.support.passages import with_nlp_layer

    s = with_nlp_layer(settings)
    folder = tmp_path / "passages"
    folder.mkdir()
    # one name, two spellings: whichever source is read first names the entity
    (folder / "accented.txt").write_text("Frédéric Chopin wrote nocturnes in Paris.\n")
    (folder / "plain.txt").write_text("Frederic Chopin was born near Warsaw in Poland.\n")
    for i, line in enumerate(ENTITY_PASSAGES):
        (folder / f"p{i}.txt").write_text(line + "\n")

    def layer(corpus: str) -> dict[str, tuple]:
        report = ingest_paths(clean_graph, s, [folder], corpus, embedder=embedder)
        assert report.status == "completed", report.summary()
        return {
            r["key"]: (r["name"], r["type"], tuple(sorted(r["uris"])))
            for r in clean_graph.read_raw(
                "MATCH (e:Entity {corpus: $c})-[:MENTIONED_IN]->(ch:Chunk) "
                "MATCH (src:Source {id: ch.source_id}) "
                "RETURN e.key AS key, e.name AS name, e.type AS type, "
                "collect(DISTINCT src.uri) AS uris",
                c=corpus,
            )
        }

    first = layer("names-a")
    uris = {
        r["name"]: r["uri"]
        for r in clean_graph.read_raw(
            "MATCH (s:Source {corpus: 'names-a'}) RETURN split(s.uri, '/')[-1] AS name, s.uri AS uri"
        )
    }
    a, b = uris["accented.txt"], uris["plain.txt"]

    def accented_first(corpus: str) -> bool:
        return source_id(corpus, a) < source_id(corpus, b)

    # a second name under which the two sources' ids sort the other way round
    other = next(
        name
        for i in range(100)
        if accented_first(name := f"names-{i}") != accented_first("names-a")
    )
    assert "frederic chopin" in first and len(first["frederic chopin"][2]) == 2, first
    assert layer(other) == first
