"""Segmentation: sentences, sentence-complete fixed-size chunks, and the segmenter seam.

``split_sentences`` is the rule-based splitter; ``pack_units`` builds level-1 chunks of at most
``Settings.segment.chunk_tokens`` tokens; :func:`get_chunker` returns the configured level-1
segmenter (``fixed``, or ``sage`` from :mod:`kg_platform.segmenting.sage`, imported only when
chosen).
"""

from kg_platform.segmenting.chunker import Chunker, get_chunker
from kg_platform.segmenting.fixed import Unit, make_units, pack_units, split_long_units
from kg_platform.segmenting.sentences import split_sentences, split_units

__all__ = [
    "Chunker",
    "Unit",
    "get_chunker",
    "make_units",
    "pack_units",
    "split_long_units",
    "split_sentences",
    "split_units",
]
