"""The one store of ``(:Trajectory)`` records: decomposition runs (Algorithm 1 answers,
Algorithm 2 data) and recorded retrievals.

Every record is written here: :func:`store_run` for a decomposition run (``kgp ask`` and the
lab's collection), :func:`store_retrieval` for a search recorded for the Browser guide, both
through one id scheme and one clock. Run properties: ``id``, ``question``, ``corpus``, ``kind`` (``ask`` | ``collect``), ``steps`` (JSON:
one object per round with proposals, candidates and scores, the choice, tokens), ``answer``,
``score`` (answer F1 against gold, collection only), ``stop_reason``, ``rounds``, ``tokens``,
``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``model``, ``created``, plus
``(:Trajectory)-[:CHOSE {round}]->(:Chunk)`` for the chunks that entered the context. A recorded
retrieval (``kind = 'retrieve'``) has no rounds; its ``CHOSE`` edges carry each item's rank,
score, breakdown, path and the named query that found it.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient
    from kg_platform.reasoning.types import Evidence, Usage
    from kg_platform.retrieval.base import RetrievedItem

__all__ = [
    "DecompositionRecord",
    "load_trajectory",
    "new_trajectory_id",
    "store_retrieval",
    "store_run",
    "store_trajectory",
]


class DecompositionRecord(Protocol):
    """What a stored run needs of a decomposition: its rounds, chosen chunks and why it stopped
    (the reasoner's ``DecompositionRun`` and the lab's collected runs both have these)."""

    @property
    def context(self) -> Sequence[Evidence]: ...

    @property
    def stop_reason(self) -> str: ...

    def steps_json(self) -> list[dict[str, Any]]: ...


def new_trajectory_id(question: str) -> str:
    """Unique per run (the same question may be run many times by Algorithm 2)."""
    seed = f"{question}\x00{time.time_ns()}\x00{uuid.uuid4().hex}"
    return hashlib.sha256(seed.encode()).hexdigest()[:24]


def _created() -> str:
    """A record's ``created`` stamp: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def store_run(
    graph: "GraphClient",
    *,
    kind: str,
    question: str,
    corpus: str | None,
    run: DecompositionRecord,
    answer: str,
    usage: "Usage",
    model: str = "",
    score: float | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    """Store one decomposition run under a new id (returned): its rounds, the chunks it chose
    in order, its answer and what it cost."""
    return store_trajectory(
        graph,
        trajectory_id=new_trajectory_id(question),
        question=question,
        corpus=corpus,
        kind=kind,
        steps=run.steps_json(),
        answer=answer,
        stop_reason=run.stop_reason,
        chunk_ids=[e.chunk_id for e in run.context],
        tokens=usage.total_tokens,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cost_usd=usage.cost_usd,
        model=model,
        score=score,
        extra=extra,
    )


def store_retrieval(
    graph: "GraphClient",
    *,
    question: str,
    corpus: str | None,
    strategy: str,
    items: Sequence["RetrievedItem"],
) -> str:
    """Store one retrieval as a ``kind = 'retrieve'`` record under a new id (returned), so the
    Browser guide can show why each item was retrieved."""
    tid = new_trajectory_id(question)
    graph.write(
        "reasoning/record_retrieval",
        id=tid,
        question=question,
        corpus=corpus,
        created=_created(),
        strategy=strategy,
        items=[
            {
                "id": it.id,
                "rank": i + 1,
                "score": float(it.score),
                "breakdown": json.dumps(it.breakdown),
                "path": list(it.path),
                "query": it.query,
            }
            for i, it in enumerate(items)
        ],
    )
    return tid


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
    """Write one run record as given (its id chosen by the caller); :func:`store_run` is the
    usual way in. Properties that are ``None`` are left out."""
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
        "created": _created(),
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
