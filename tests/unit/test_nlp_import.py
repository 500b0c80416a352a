"""spaCy is imported without torch for a CPU pipeline (``distilling.nlp.import_spacy``): thinc
would otherwise import torch whenever it is installed, ~1.3 CPU-s per process, which the small
English pipeline never uses. A pipeline that runs on torch keeps it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from kg_platform.distilling.nlp import DEFAULT_MODEL, nlp_available, pipeline_uses_torch

needs_spacy = pytest.mark.skipif(
    not nlp_available(DEFAULT_MODEL), reason="spaCy and its English pipeline are not installed"
)


@needs_spacy
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed: nothing to hide"
)
def test_loading_the_pipeline_does_not_import_torch_and_torch_still_imports_after() -> None:
    code = (
        "import sys\n"
        "from kg_platform.distilling.nlp import DEFAULT_MODEL, load_pipeline\n"
        "nlp = load_pipeline(DEFAULT_MODEL)\n"
        "assert [e.text for e in nlp('Barack Obama was born in Hawaii.').ents], 'no entities'\n"
        "assert 'torch' not in sys.modules, 'importing spaCy pulled torch in'\n"
        "import torch\n"
        "assert torch.zeros(2).sum().item() == 0\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@needs_spacy
def test_the_bundled_pipeline_does_not_use_torch() -> None:
    assert pipeline_uses_torch(DEFAULT_MODEL) is False


def test_a_transformer_pipeline_or_an_unknown_one_keeps_torch(tmp_path: Path) -> None:
    trf = tmp_path / "en_core_web_trf-3.8.0"
    trf.mkdir()
    (trf / "config.cfg").write_text(
        '[components.transformer]\nfactory = "transformer"\n'
        '[components.transformer.model]\n@architectures = "spacy-transformers.TransformerModel.v3"\n',
        encoding="utf-8",
    )
    assert pipeline_uses_torch(str(tmp_path)) is True  # a package folder holding the pipeline
    assert pipeline_uses_torch(str(trf)) is True  # the pipeline folder itself
    assert pipeline_uses_torch(str(tmp_path / "missing")) is True
    assert pipeline_uses_torch("no_such_spacy_package_here") is True
