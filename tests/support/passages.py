"""Pools of short passages for retrieval tests: one source per line, optionally with the NLP
distilled layer built at ingestion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: three passages whose entities chain: a film, its director, where he was born and teaches
ENTITY_PASSAGES = [
    "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor.",
    "Lucien Castaing-Taylor was born in Liverpool and teaches at Harvard.",
    "Ducks feed on plants, insects and small fish in Montana.",
]


def with_nlp_layer(settings: Any) -> Any:
    """``settings`` with the NLP extractor building the distilled layer at every ingestion."""
    distill = settings.distill.model_copy(update={"extractor": "nlp", "nlp_on_ingest": True})
    return settings.model_copy(update={"distill": distill})


def ingest_passages(platform: Any, folder: Path, corpus: str, lines: list[str]) -> None:
    """One source per line: a pool of short passages, ingested into ``corpus``."""
    for i, line in enumerate(lines):
        (folder / f"p{i}.txt").write_text(line + "\n", encoding="utf-8")
    report = platform.ingest([folder], corpus=corpus)
    assert report.status == "completed", report.summary()
