"""Token usage and cost accounting, per call, per ingestion run and per question.

Every call the client makes (or answers from its cache) is recorded into the client's lifetime
``UsageMeter`` and into every meter opened with :func:`LLMClient.meter` in the current context.
Meters travel with ``contextvars``, so two questions answered in parallel threads each see only
their own calls, and ``map_structured`` copies the caller's context into its worker threads.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class UsageMeter:
    """Running totals. ``calls`` counts requests sent to the endpoint; cache hits are separate
    and cost nothing."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    invalid_outputs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    by_prompt: dict[str, dict[str, int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(
        self,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        cached: bool,
        cost_usd: float,
        prompt_name: str | None = None,
    ) -> None:
        with self._lock:
            if cached:
                self.cache_hits += 1
            else:
                self.calls += 1
                self.prompt_tokens += prompt_tokens
                self.completion_tokens += completion_tokens
                self.cost_usd += cost_usd
            if prompt_name:
                slot = self.by_prompt.setdefault(
                    prompt_name,
                    {"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0},
                )
                if cached:
                    slot["cache_hits"] += 1
                else:
                    slot["calls"] += 1
                    slot["prompt_tokens"] += prompt_tokens
                    slot["completion_tokens"] += completion_tokens

    def record_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def record_invalid(self) -> None:
        with self._lock:
            self.invalid_outputs += 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "invalid_outputs": self.invalid_outputs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "by_prompt": {k: dict(v) for k, v in self.by_prompt.items()},
        }


_ACTIVE: contextvars.ContextVar[tuple[UsageMeter, ...]] = contextvars.ContextVar(
    "kgp_llm_meters", default=()
)


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """Open a meter that sums every call made in this context until the block ends."""
    meter = UsageMeter()
    token = _ACTIVE.set(_ACTIVE.get() + (meter,))
    try:
        yield meter
    finally:
        _ACTIVE.reset(token)


def active_meters() -> tuple[UsageMeter, ...]:
    return _ACTIVE.get()


def cost_of(
    prompt_tokens: int, completion_tokens: int, price_in_per_1m: float, price_out_per_1m: float
) -> float:
    """SAGE paper: Cost = I_t * c_i + O_t * c_o."""
    return (prompt_tokens * price_in_per_1m + completion_tokens * price_out_per_1m) / 1e6
