"""The one reader of QA JSONL files (the bench schema: one question object per line).

Ingestion (``kgp lab ingest-qa``), evaluation, router training and decomposer data collection all
read the same files; they share this reader so a malformed line fails the same way everywhere:
with the file, the line number and what the line lacks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kg_platform.errors import EvaluationError

__all__ = ["read_qa_rows"]

SCHEMA_HINT = "one JSON object per line, in the bench schema (question, answer, paragraphs, ...)"


def read_qa_rows(
    path: str | Path,
    *,
    required: Sequence[str] = ("question",),
    limit: int | None = None,
    hint: str = SCHEMA_HINT,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, row)`` for the first ``limit`` non-blank lines of ``path``.

    Raises :class:`~kg_platform.errors.EvaluationError` when the file is missing, a line is not
    a JSON object, or it lacks one of the ``required`` fields (``hint`` says what is expected).
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(
            f"QA file {path} does not exist",
            hint="pass a QA .jsonl file (e.g. one of bench/dev/*.jsonl)",
        )
    count = 0
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if limit is not None and count >= limit:
                return
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvaluationError(
                    f"{path}:{lineno} is not valid JSON: {exc}", hint=hint
                ) from exc
            missing = [f for f in required if not isinstance(row, dict) or f not in row]
            if missing:
                raise EvaluationError(
                    f"{path}:{lineno} has no {', '.join(map(repr, missing))}", hint=hint
                )
            count += 1
            yield lineno, row
