"""The spaCy-free question finder against the real Neo4j: the question's n-grams are looked up
among its corpus's entity keys (and only its corpus's), typed as the entity is, and the default
path walks the entities of a passage corpus without importing spaCy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kg_platform.distilling.common import normalise_name
from kg_platform.retrieval.strategies.question_keys import question_mentions
from tests.support.passages import ENTITY_PASSAGES, ingest_passages, with_nlp_layer
from tests.support.fixtures import index_corpus

pytestmark = pytest.mark.integration

CORPUS = "question-keys"
QUESTION = "Which films did the director of Sweetgrass shoot in New York City or Montana?"
ENTITIES = [
    {"id": f"e{i}", "key": normalise_name(name), "name": name, "type": kind, "corpus": corpus}
    for i, (name, kind, corpus) in enumerate(
        [
            ("Sweetgrass", "work", CORPUS),
            ("New York City", "place", CORPUS),
            ("New York", "place", CORPUS),
            ("film", "concept", CORPUS),
            ("director", "concept", "another corpus"),
        ]
    )
]


@pytest.fixture()
def entities(clean_graph):
    clean_graph.write_raw(
        "UNWIND $rows AS row "
        "CREATE (:Entity {id: row.id, key: row.key, name: row.name, type: row.type, "
        "corpus: row.corpus})",
        rows=ENTITIES,
    )
    index_corpus(clean_graph, CORPUS)  # hand-written nodes: the corpus's own labels and indexes
    return clean_graph


def test_the_question_s_keys_of_its_corpus_are_found_longest_first(entities):
    found = question_mentions(entities, CORPUS, QUESTION)
    assert [(m.key, m.name, m.type) for m in found] == [
        ("film", "films", "concept"),
        ("sweetgrass", "Sweetgrass", "work"),
        ("new york city", "New York City", "place"),
        ("montana", "Montana", None),  # no key: a name to look up by embedding
    ]
    # "director" is an entity of another corpus only
    assert "director" in {m.key for m in question_mentions(entities, None, QUESTION)}


def test_the_entity_strategy_seeds_from_keys_weighing_concepts_lower(entities, settings, embedder):
    from kg_platform.retrieval.base import RetrievalContext
    from kg_platform.retrieval.strategies.entity import EntityStrategy

    assert settings.tuning.entity_graph.question_finder == "keys"
    ctx = RetrievalContext(entities, embedder, settings, corpus=CORPUS)
    _, seeds = EntityStrategy(ctx).seeds(QUESTION)
    weights = {s["name"]: s["w"] for s in seeds}
    assert weights["Sweetgrass"] == pytest.approx(1.0)
    assert weights["New York City"] == pytest.approx(1.0)
    assert weights["film"] == pytest.approx(settings.tuning.entity_graph.concept_weight)
    assert "New York" not in weights and "director" not in weights


_CHILD = textwrap.dedent(
    """
    import json, sys
    from kg_platform.cli.main import main
    sys.argv = ["kgp", "retrieve", sys.argv[1], "--corpus", sys.argv[2], "-k", "3", "--explain"]
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    print(json.dumps({"code": code, "spacy": "spacy" in sys.modules}))
    """
)


def test_kgp_retrieve_walks_the_entity_layer_without_importing_spacy(
    clean_graph, settings, embedder, neo4j_server, tmp_path
):
    """A one-shot ``kgp retrieve`` pays for every import, and spaCy's import and pipeline load
    were more than half of one. Over a passage corpus with the NLP layer the default path walks
    the entities (``--explain`` shows the seed) without loading spaCy."""
    pytest.importorskip("spacy", reason="needs the nlp extra to build the layer")
    from kg_platform.sdk import KnowledgePlatform

    kp = KnowledgePlatform(with_nlp_layer(settings), graph=clean_graph, embedder=embedder)
    ingest_passages(kp, tmp_path, CORPUS, ENTITY_PASSAGES)

    env = {
        **os.environ,
        "NEO4J_URI": neo4j_server["uri"],
        "NEO4J_PASSWORD": neo4j_server["password"],
        "KGP_DATA_DIR": str(settings.data_dir),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, "Where was the director of Sweetgrass born?", CORPUS],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    status = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status["code"] in (0, None), proc.stderr[-3000:]
    assert "query=retrieval/entity_ppr" in proc.stdout
    assert "Sweetgrass (named by the question)" in proc.stdout
    assert "explanation (auto -> entity: the question names Sweetgrass; selection" in proc.stdout
    assert status["spacy"] is False
