"""kill -9 of ``kgp ingest`` at seeded points spread over parse, embed, write and the piece-graph
step, each killed run resumed by the next; at the end every source equals a clean ingest of the same
file, the piece graph equals a rebuild from scratch, no Source is duplicated, nothing is orphaned, and the killed runs are recorded as
``interrupted``.

The kills come from the ``KGP_FAULT_KILL=<phase>:<n>`` hook (kg_platform/_faults.py), so every
point is reproducible from the seed. Files are edited between rounds so the replace path is killed
too: every round edits every file, so each run has all of its phases ahead of it and the kill
lands. ``KGP_SOAK=1`` runs 60 kills instead of 8 (the seed's first 8 points already kill
every phase, the replace path included; each kill is a ``kgp ingest`` process, 5-10 s of CI);
``KGP_FAULT_KILLS=N`` sets the count.
"""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from kg_platform.ingest.writer import drop_corpus
from tests.conftest import DOCUMENTS
from tests.faults.helpers import (
    assert_same_edges,
    corpus_shape,
    duplicate_sources,
    kgp_env,
    orphans,
    run_kgp,
    soak,
    stored_and_rebuilt_edges,
)

pytestmark = [pytest.mark.faults, pytest.mark.integration]

SEED = 15
FILES = ["md/docling-wiki-ibm.md", "md/markitdown-README.md", "md/pdfplumber-README.md"]


def _points(rng: random.Random, files: int) -> str:
    phase = rng.choice(["parse", "embed", "write", "write", "piece_graph"])
    top = {"parse": files, "embed": files, "write": 2 * files, "piece_graph": 1}[phase]
    return f"{phase}:{rng.randint(1, top)}"


def test_kill_nine_at_seeded_points_then_resume_equals_a_clean_ingest(
    graph_session, settings, tmp_path
):
    rng = random.Random(SEED)
    folder = tmp_path / "docs"
    folder.mkdir()
    for rel in FILES:
        shutil.copy(DOCUMENTS / rel, folder / rel.split("/")[-1])
    corpus, clean = "t-kill", "t-kill-clean"
    for name in (corpus, clean):
        drop_corpus(graph_session, name)
    env = kgp_env(settings, KGP_INGEST__TRANSACTION_ROWS="1")  # one transaction per source
    kills = int(os.environ.get("KGP_FAULT_KILLS") or (60 if soak() else 8))
    log: list[tuple[str, int]] = []
    for i in range(kills):
        if i % 4:  # three rounds in four edit every file: the replace path, all phases ahead
            for path in sorted(folder.iterdir()):
                path.write_text(path.read_text() + f"\n\nEdited in round {i}. The end.\n")
        point = _points(rng, len(FILES))
        res = run_kgp(
            ["ingest", str(folder), "--corpus", corpus, "--json"], {**env, "KGP_FAULT_KILL": point}
        )
        log.append((point, res.returncode))
        assert res.returncode in (-9, 0), (point, res.returncode, res.stderr[-2000:])
        assert duplicate_sources(graph_session, corpus) == [], point
        assert orphans(graph_session, corpus) == {}, point
    assert sum(1 for _, rc in log if rc == -9) >= kills // 2, log
    if kills >= 8:
        phases = {p.split(":")[0] for p, rc in log if rc == -9}
        assert phases == {"parse", "embed", "write", "piece_graph"}, log

    resumed = run_kgp(["ingest", str(folder), "--corpus", corpus, "--json"], env)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    fresh = run_kgp(["ingest", str(folder), "--corpus", clean, "--json"], env)
    assert fresh.returncode == 0, fresh.stderr[-2000:]

    assert corpus_shape(graph_session, corpus) == corpus_shape(graph_session, clean)
    assert len(corpus_shape(graph_session, corpus)) == len(FILES)
    assert duplicate_sources(graph_session, corpus) == []
    assert orphans(graph_session, corpus) == {}

    runs = graph_session.read_raw(
        "MATCH (r:IngestRun {corpus: $c}) RETURN r.status AS status, r.errors AS errors", c=corpus
    )
    statuses = [r["status"] for r in runs]
    assert "running" not in statuses
    assert statuses.count("interrupted") == sum(1 for _, rc in log if rc == -9)
    interrupted = [json.loads(r["errors"]) for r in runs if r["status"] == "interrupted"]
    assert all(e[0]["error"] == "interrupted" for e in interrupted)

    state = graph_session.read_raw(
        "MATCH (co:Corpus {name: $c}) RETURN co.piece_graph_dirty AS d", c=corpus
    )
    assert state and state[0]["d"] is False, "the resumed run left the piece graph dirty"
    assert_same_edges(*stored_and_rebuilt_edges(graph_session, settings, corpus))
