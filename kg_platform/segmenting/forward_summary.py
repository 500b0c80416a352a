"""Forward-summary chunking (PIKE-RAG paper) as an optional level-1 segmenter.

The LLM reads a window of two base chunks as numbered lines (one sentence per line), together
with the running summary of everything before it, and picks the line that ends a structurally
sensible first chunk; it also summarises that chunk and, in the light of it, the rest of the
window, which becomes the next forward summary. The rest of the text is re-split and the loop
goes on; the last base chunk is summarised with ``fwd_summary_refine``. Chunks therefore follow
content while staying under the level-1 budget (base chunks are half of it, so a window is one
budget), and every chunk carries a context-aware summary (``summaries``), keyed by the index of
its first sentence, for the writer to store as ``Chunk.summary``.

Guards: the chosen line is clamped into the window; a reply that keeps nothing ("first part
empty") or an unusable reply falls back to the first base chunk, so text is never lost and the
loop always advances.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kg_platform.errors import LLMError, LLMNotConfigured
from kg_platform.llm import LLMClient
from kg_platform.llm.replies import Resplit, Summary
from kg_platform.segmenting.fixed import Unit, pack_units, split_long_units

log = logging.getLogger(__name__)


class ForwardSummaryChunker:
    """``Chunker`` (see ``kg_platform.segmenting.chunker``) driven by an LLM."""

    name = "forward_summary"

    def __init__(self, llm: LLMClient | None, budget: int, hard_factor: float = 2.0) -> None:
        if llm is None:
            raise LLMNotConfigured(
                "segmenter 'forward_summary' needs an LLM and none is configured",
                hint="set KGP_LLM__BASE_URL and KGP_LLM__MODEL, or KGP_SEGMENT__SEGMENTER=fixed",
            )
        self.llm = llm
        self.budget = budget
        self.base = max(16, budget // 2)
        self.hard_factor = hard_factor
        self.summaries: dict[int, str] = {}  # first sentence index of a chunk -> summary
        self.fallbacks = 0

    def _summary(self, prompt: str, variables: dict) -> str:
        try:
            out = self.llm.structured(prompt, variables)
            return out.summary if isinstance(out, Summary) else ""
        except LLMError as exc:
            log.warning("forward summary failed: %s", str(exc).splitlines()[0])
            return ""

    def chunk(self, units: Sequence[Unit]) -> list[list[Unit]]:
        rest = split_long_units(units, self.base, self.hard_factor)
        out: list[list[Unit]] = []
        fwd: str | None = None
        while rest:
            base = pack_units(rest, self.base)
            if fwd is None:
                fwd = self._summary("fwd_summary", {"text": " ".join(u.text for u in base[0])})
            if len(base) == 1:
                summary = self._summary(
                    "fwd_summary_refine",
                    {
                        "previous": fwd or "(start of document)",
                        "text": " ".join(u.text for u in base[0]),
                    },
                )
                out.append(list(base[0]))
                self.summaries[base[0][0].index] = summary
                break
            window = list(base[0]) + list(base[1])
            lines = "\n".join(f"{i + 1}: {u.text}" for i, u in enumerate(window))
            end, first_sum, second_sum = len(base[0]), "", fwd or ""
            try:
                res = self.llm.structured(
                    "fwd_resplit", {"previous": fwd or "(start of document)", "lines": lines}
                )
                assert isinstance(res, Resplit)
                if 1 <= res.end_line <= len(window):
                    end = res.end_line
                    first_sum, second_sum = res.summary_first, res.summary_second
                else:
                    self.fallbacks += 1
            except LLMError as exc:
                log.warning("forward resplit failed: %s", str(exc).splitlines()[0])
                self.fallbacks += 1
            group = window[:end]
            out.append(group)
            self.summaries[group[0].index] = first_sum
            fwd = second_sum or first_sum or fwd
            rest = list(rest[len(group) :])
        return out


__all__ = ["ForwardSummaryChunker"]
