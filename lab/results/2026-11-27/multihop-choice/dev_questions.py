"""What both collectors share: each question of a multi-hop dev file, with the `entity` and
`mogg` strategies built once over its corpus and a progress line per question."""

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kg_platform.config import get_settings
from kg_platform.retrieval.base import RetrievalContext, get_strategy
from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform_lab.evaluation.harness import load_examples


def dev_questions(dataset: Path, corpus: str) -> Iterator[tuple[Any, Any, Any, Any, Any]]:
    """Yield ``(platform, context, entity, mogg, example)`` per question of ``dataset``."""
    with KnowledgePlatform(get_settings()) as kp:
        _, examples = load_examples(dataset, document_qa=False, limit=None)
        ctx = RetrievalContext(
            graph=kp.graph, embedder=kp.embedder, settings=kp.settings, corpus=corpus
        )
        ent, mog = get_strategy("entity", ctx), get_strategy("mogg", ctx)
        t0 = time.time()
        for i, ex in enumerate(examples):
            yield kp, ctx, ent, mog, ex
            print(i, round(time.time() - t0, 1), file=sys.stderr, flush=True)
