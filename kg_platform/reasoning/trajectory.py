"""Decomposition runs stored as ``(:Trajectory)`` nodes (Algorithm 1 answers, Algorithm 2 data).

Properties: ``id``, ``question``, ``corpus``, ``kind`` (``ask`` | ``collect``), ``steps`` (JSON:
one object per round with proposals, candidates and scores, the choice, tokens), ``answer``,
``score`` (answer F1 against gold, collection only), ``stop_reason``, ``rounds``, ``tokens``,
``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``model``, ``created``, plus
``(:Trajectory)-[:CHOSE {round}]->(:Chunk)`` for the chunks that entered the context.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient


def new_trajectory_id(question: str) -> str:
    """Unique per run (the same question may be run many times by Algorithm 2)."""
    seed = f"{question}\x00{time.time_ns()}\x00{uuid.uuid4().hex}"
    return hashlib.sha256(seed.encode()).hexdigest()[:24]


def store_trajectory(
    graph: "GraphClient",
    *,
    trajectory_id: str,
    question: str,
    corpus: str | None,
    kind: str,
    steps: list[dict[str, Any]],
    answer: str,
    stop_reason: str,
    chunk_ids: list[str],
    tokens: int,
    prompt_tokens: int,
    completion_tokens: int,
    cost_usd: float,
    model: str = "",
    score: float | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    props: dict[str, Any] = {
        "question": question,
        "corpus": corpus,
        "kind": kind,
        "steps": json.dumps(steps, ensure_ascii=False),
        "answer": answer,
        "stop_reason": stop_reason,
        "rounds": len(steps),
        "tokens": tokens,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": cost_usd,
        "model": model,
        "score": score,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if extra:
        props.update(
            {k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in extra.items()}
        )
    graph.write(
        "reasoning/store_trajectory",
        id=trajectory_id,
        props={k: v for k, v in props.items() if v is not None},
        chunk_ids=chunk_ids,
    )
    return trajectory_id


def load_trajectory(graph: "GraphClient", trajectory_id: str) -> dict[str, Any] | None:
    rows = graph.read("reasoning/trajectory", id=trajectory_id)
    if not rows:
        return None
    data = dict(rows[0]["trajectory"])
    data["steps"] = json.loads(data.get("steps") or "[]")
    data["chunk_ids"] = list(rows[0]["chunk_ids"])
    return data
