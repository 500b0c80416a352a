"""The level-1 segmenter seam: ``fixed`` (token budget) or ``sage`` (the learned model).

Both take the sentences of one section (as :class:`Unit`\\ s) and return groups of consecutive
units. The SAGE model is imported only when ``Settings.segment.segmenter == "sage"``, so the
fixed path never loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from kg_platform.errors import ConfigError, IngestionError
from kg_platform.segmenting.fixed import Unit, pack_units, split_long_units

if TYPE_CHECKING:
    from kg_platform.config import Settings


class Chunker(Protocol):
    name: str

    def chunk(self, units: Sequence[Unit]) -> list[list[Unit]]: ...


class FixedChunker:
    """Sentence-complete packing up to the level-1 token budget."""

    name = "fixed"

    def __init__(self, budget: int, hard_factor: float = 2.0) -> None:
        self.budget = budget
        self.hard_factor = hard_factor

    def chunk(self, units: Sequence[Unit]) -> list[list[Unit]]:
        return pack_units(split_long_units(units, self.budget, self.hard_factor), self.budget)


class SageChunker:
    """Adapter over the SAGE segmenter's ``load_segmenter(settings).split(list[str])``.

    The model returns groups of sentence strings; they must cover the input in order, which is
    checked so a model bug cannot silently drop or reorder text.
    """

    name = "sage"

    def __init__(self, settings: "Settings") -> None:
        try:
            from kg_platform.segmenting.sage import load_segmenter
        except ImportError as exc:
            raise ConfigError(
                "segmenter 'sage' is selected but kg_platform.segmenting.sage is not available",
                hint="set KGP_SEGMENT__SEGMENTER=fixed, or install/train the SAGE segmenter",
            ) from exc
        self._model = load_segmenter(settings)
        self._fixed = FixedChunker(settings.segment.chunk_tokens)

    def chunk(self, units: Sequence[Unit]) -> list[list[Unit]]:
        units = split_long_units(units, self._fixed.budget, self._fixed.hard_factor)
        if not units:
            return []
        groups = self._model.split([u.text for u in units])
        out: list[list[Unit]] = []
        pos = 0
        for group in groups:
            if not group:
                continue
            span = list(units[pos : pos + len(group)])
            if [u.text for u in span] != list(group):
                raise IngestionError(
                    "the SAGE segmenter returned groups that do not cover its input in order",
                    hint="this is a bug in the SAGE model adapter; use KGP_SEGMENT__SEGMENTER=fixed",
                )
            out.append(span)
            pos += len(group)
        if pos != len(units):
            raise IngestionError(
                f"the SAGE segmenter dropped {len(units) - pos} of {len(units)} sentences",
                hint="this is a bug in the SAGE model adapter; use KGP_SEGMENT__SEGMENTER=fixed",
            )
        return out


def get_chunker(settings: "Settings") -> Chunker:
    if settings.segment.segmenter == "sage":
        return SageChunker(settings)
    if settings.segment.segmenter == "forward_summary":
        from kg_platform.segmenting.forward_summary import ForwardSummaryChunker
        from kg_platform.llm import get_llm

        return ForwardSummaryChunker(get_llm(settings), settings.segment.chunk_tokens)
    return FixedChunker(settings.segment.chunk_tokens)
