"""A kill during the NLP entity step of ingestion leaves nothing half-written: every level-1
chunk is either done (marker ``nlp@2`` with its mentions) or untouched (no marker, no mention),
and the next ``kgp ingest`` (sources unchanged, so skipped) finishes exactly the chunks left,
ending with the mentions a run that was never killed writes."""

from __future__ import annotations

import pytest

from kg_platform.distilling.nlp import version
from kg_platform.ingest.writer import drop_corpus
from tests.faults.helpers import kgp_env, run_kgp

pytestmark = [pytest.mark.faults, pytest.mark.integration]

TEXTS = {
    "curie.md": "# Marie Curie\n\nMarie Curie was born in Warsaw and worked in Paris.\n",
    "chopin.md": "# Frederic Chopin\n\nFrederic Chopin grew up in Warsaw. He moved to Paris.\n",
    "copernicus.md": "# Copernicus\n\nNicolaus Copernicus studied in Krakow and Bologna.\n",
    "sklodowska.md": "# Paris\n\nParis is the capital of France. The Seine flows through Paris.\n",
}


def _state(graph, corpus: str) -> dict[str, tuple[str | None, frozenset[str]]]:
    """Per level-1 chunk text: its entities marker and the keys of the entities mentioning it."""
    rows = graph.read_raw(
        "MATCH (c:Chunk {corpus: $c}) WHERE c.level = 1 "
        "OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c) "
        "RETURN c.text AS text, c.entities_v AS marker, collect(e.key) AS keys",
        c=corpus,
    )
    return {r["text"]: (r["marker"], frozenset(r["keys"])) for r in rows}


def test_a_killed_nlp_step_leaves_whole_chunks_and_the_next_ingest_finishes(
    graph_session, settings, tmp_path
):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text)
    killed, clean = "t-nlp-killed", "t-nlp-clean"
    for name in (killed, clean):
        drop_corpus(graph_session, name)
    # one source per NLP transaction, so the kill lands between two committed batches
    env = kgp_env(
        settings,
        KGP_DISTILL__EXTRACTOR="nlp",
        KGP_DISTILL__NLP_ON_INGEST="true",
        KGP_DISTILL__NLP_BATCH_CHUNKS="1",
    )
    res = run_kgp(
        ["ingest", str(folder), "--corpus", killed, "--json"],
        {**env, "KGP_FAULT_KILL": "entities:3"},
    )
    assert res.returncode == -9, res.stderr[-2000:]
    state = _state(graph_session, killed)
    done = [t for t, (marker, _) in state.items() if marker == version(settings.distill.relations)]
    untouched = [t for t, (marker, keys) in state.items() if marker is None and not keys]
    assert len(done) == 2 and len(done) + len(untouched) == len(state) == len(TEXTS)

    again = run_kgp(["ingest", str(folder), "--corpus", killed, "--json"], env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert run_kgp(["ingest", str(folder), "--corpus", clean, "--json"], env).returncode == 0
    after, reference = _state(graph_session, killed), _state(graph_session, clean)
    assert all(marker == version(settings.distill.relations) for marker, _ in after.values())
    assert {t: keys for t, (_, keys) in after.items()} == {
        t: keys for t, (_, keys) in reference.items()
    }
    dupes = graph_session.read_raw(
        "MATCH (e:Entity {corpus: $c}) WITH e.key AS k, count(*) AS n WHERE n > 1 RETURN k",
        c=killed,
    )
    assert dupes == []
