"""Bad inputs in one batch: each is reported with a reason (never as an internal bug), the rest of
the batch lands, and the run ends ``completed_with_errors`` (``kgp ingest`` exit code 1).

Unreadable files: the suite runs as root, for whom ``chmod 000`` does not stop reads, so the
"cannot read" path is exercised with a symlink loop (the same ``OSError`` branch); an unreadable
folder is covered by test_unreadable_folder.py with a real permission denial.
"""

from __future__ import annotations

import os

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from tests.faults.helpers import duplicate_sources, orphans, soak

pytestmark = [pytest.mark.faults, pytest.mark.integration]

GOOD = "# Good\n\nThe otter floats on its back. It cracks shells on a stone.\n"
TINY = 500


def _batch(root) -> tuple[set[str], set[str]]:
    """Write the batch; return (names that must fail, names that must land)."""
    bad = {
        "empty.txt": b"",
        "zero.pdf": b"",
        "corrupt.pdf": b"%PDF-1.7\n" + bytes(range(256)) * 8,
        "corrupt.docx": b"PK\x03\x04 this is not a zip archive",
        "binary.txt": bytes(range(256)) * 64,
        "large.md": b"# Large\n\n" + b"Big words here. " * 20_000,
    }
    for name, data in bad.items():
        (root / name).write_bytes(data)
    os.symlink(root / "loop-b.md", root / "loop-a.md")
    os.symlink(root / "loop-a.md", root / "loop-b.md")
    good = {
        "invalid-utf8.md": b"# Caf\xe9\n\nThe caf\xe9 opens early. Bread is baked at dawn.\n",
        "we ird (1) 'q' $x `t` \u00f1.md": GOOD.encode(),
        "line\nbreak.md": GOOD.encode(),
    }
    for name, data in good.items():
        (root / name).write_bytes(data)
    tiny = root / "tiny"
    tiny.mkdir()
    for i in range(TINY):
        (tiny / f"t{i:03d}.md").write_text(f"Note {i}. The kettle number {i} boils.\n")
    must_fail = set(bad) - {"binary.txt"} | {"loop-a.md", "loop-b.md"}
    return must_fail, set(good)


def test_bad_inputs_are_reported_and_the_rest_lands(graph_session, settings, embedder, tmp_path):
    root = tmp_path / "batch"
    root.mkdir()
    must_fail, must_land = _batch(root)
    corpus = "t-bad-inputs"
    drop_corpus(graph_session, corpus)
    capped = settings.model_copy(
        update={"ingest": settings.ingest.model_copy(update={"max_file_bytes": 100_000})}
    )
    report = ingest_paths(graph_session, capped, [root], corpus, embedder=embedder)
    assert report.status == "completed_with_errors" and report.exit_code == 1
    failed = {os.path.basename(e.path): e for e in report.errors}
    assert must_fail <= set(failed), sorted(failed)
    for name, err in failed.items():
        assert err.reason.strip(), name
        assert "this is a bug" not in err.hint, (name, err)
    landed = {os.path.basename(u) for u in report.added}
    assert must_land <= landed, sorted(must_land - landed)
    assert sum(1 for u in report.added if "/tiny/" in u) == TINY
    assert duplicate_sources(graph_session, corpus) == []
    assert orphans(graph_session, corpus) == {}
    again = ingest_paths(graph_session, capped, [root], corpus, embedder=embedder)
    assert again.added == [] and len(again.skipped) == len(report.added)
    if soak():
        assert (
            ingest_paths(
                graph_session, capped, [root], corpus, embedder=embedder, prune=True
            ).pruned
            == []
        )
