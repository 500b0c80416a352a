"""The graph is a function of the documents: the same files ingested under two corpus names, from
two folders, in two file orders and batch sizes, give the same count of every node label and
relationship type (SIMILAR included), and two in-process runs of the same corpus give the same
counts too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from tests.support.data import DOCUMENTS
from tests.support.graph_counts import corpus_counts, similar_by_text

pytestmark = pytest.mark.integration


#: Markdown, HTML and Word documents: boilerplate-rich pages whose short pieces tie on BM25 score.
FILES = [
    "md/docling-wiki-ibm.md",
    "md/markitdown-README.md",
    "md/pdfplumber-README.md",
    "html/autogen-blog.html",
    "html/wikipedia-duck.html",
    "html/wikipedia-microsoft.html",
    "docx/docling-unit_test_headers.docx",
    "docx/docling-word_sample.docx",
    "docx/docling-word_tables.docx",
    "docx/markitdown-test.docx",
]


def _copy(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    out = []
    for rel in FILES:
        target = folder / Path(rel).name
        shutil.copy(DOCUMENTS / rel, target)
        out.append(target)
    return out


def _with_ingest(settings, **changes):
    return settings.model_copy(update={"ingest": settings.ingest.model_copy(update=changes)})


def test_same_documents_give_the_same_graph_whatever_name_path_order_and_run(
    graph_session, settings, embedder, tmp_path
) -> None:
    first = _copy(tmp_path / "one" / "docs")
    second = _copy(tmp_path / "elsewhere" / "other-folder")
    for corpus in ("t-det-alpha", "t-det-a-quite-different-name"):
        drop_corpus(graph_session, corpus)
    a = ingest_paths(graph_session, settings, first, "t-det-alpha", embedder=embedder)
    b = ingest_paths(
        graph_session,
        _with_ingest(settings, transaction_rows=150).with_tuning(ingest={"pipeline_batches": 0}),
        list(reversed(second)),
        "t-det-a-quite-different-name",
        embedder=embedder,
    )
    assert a.status == b.status == "completed", (a.errors, b.errors)
    counts_a = corpus_counts(graph_session, "t-det-alpha")
    counts_b = corpus_counts(graph_session, "t-det-a-quite-different-name")
    assert counts_a["rel:SIMILAR"] > 1000
    assert counts_a == counts_b
    assert similar_by_text(graph_session, "t-det-alpha") == similar_by_text(
        graph_session, "t-det-a-quite-different-name"
    )

    # a second in-process run of the first corpus, dropped in between, gives the same counts
    drop_corpus(graph_session, "t-det-alpha")
    again = ingest_paths(graph_session, settings, first, "t-det-alpha", embedder=embedder)
    assert again.status == "completed", again.errors
    assert corpus_counts(graph_session, "t-det-alpha") == counts_a
