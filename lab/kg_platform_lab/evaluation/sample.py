"""A fixed sample of a document-QA folder, by paper: the first N papers by sha256 of their id.

Why by paper and by hash: QASPER splits by paper, so a sample must keep each paper's questions
together; ordering by the hash of the paper id gives the same sample on every machine, whatever
order the files were written in, and a larger N always contains a smaller one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from kg_platform_lab.evaluation.docqa import is_docqa_folder


@dataclass(frozen=True)
class SampleReport:
    papers: int
    questions: int
    out: Path


def paper_order(doc_ids: list[str]) -> list[str]:
    """The papers in sample order: ascending sha256 of the id."""
    return sorted(doc_ids, key=lambda d: hashlib.sha256(d.encode("utf-8")).hexdigest())


def sample_docqa(source: Path, out: Path, papers: int) -> SampleReport:
    """Copy the first ``papers`` papers (see :func:`paper_order`) of ``source`` and their
    questions into ``out`` in the same layout; ``out`` is replaced if it exists."""
    if not is_docqa_folder(source):
        raise ValueError(f"{source} is not a document-QA folder (papers/ + questions.jsonl)")
    if papers < 1:
        raise ValueError(f"papers must be >= 1, got {papers}")
    rows = [
        json.loads(line)
        for line in (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    with_questions = sorted({str(r["doc_id"]) for r in rows})
    chosen = set(paper_order(with_questions)[:papers])
    if out.exists():
        shutil.rmtree(out)
    (out / "papers").mkdir(parents=True)
    for doc_id in sorted(chosen):
        shutil.copyfile(source / "papers" / f"{doc_id}.md", out / "papers" / f"{doc_id}.md")
    kept = [r for r in rows if str(r["doc_id"]) in chosen]
    (out / "questions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8"
    )
    manifest = {
        "source": str(source),
        "rule": "first N papers by sha256(doc_id)",
        "papers": len(chosen),
        "questions": len(kept),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return SampleReport(papers=len(chosen), questions=len(kept), out=out)
