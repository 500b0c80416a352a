"""Reasoning: answers with citations, PIKE-RAG knowledge-aware decomposition, SAGE self-feedback.

Public surface::

    Reasoner(graph, embedder, settings, llm).ask("question", corpus="docs")  # -> Answer
    (KnowledgePlatform.ask wires the parts from the settings)
    Decomposer(steps, GraphCandidates(...)).run(question)                   # Algorithm 1
    Collector(steps, GraphCandidates(...)).collect(items)                   # Algorithm 2 + 3

Modules follow the data's path: ``candidates`` (atomic-question look-ups and fallbacks),
``decompose`` (Algorithm 1), ``collect`` (Algorithm 2, SFT export), ``answer`` (numbered
citations), ``feedback`` (SAGE loop), ``fallback`` (no-LLM evidence answer), ``pipeline`` (modes,
task classification), ``trajectory`` (``(:Trajectory)`` storage), ``llm_steps`` (the prompts).
"""

from kg_platform.reasoning.pipeline import MODES, Reasoner
from kg_platform.reasoning.types import NO_LLM_MARK, Answer, Citation, Evidence, TraceEvent, Usage

__all__ = [
    "MODES",
    "NO_LLM_MARK",
    "Answer",
    "Citation",
    "Evidence",
    "Reasoner",
    "TraceEvent",
    "Usage",
]
