"""The public facade: import-light, complete ``__all__``, runnable docstring examples, and an
API reference that builds."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import kg_platform


def test_import_is_light_and_all_names_resolve() -> None:
    code = (
        "import sys, kg_platform; "
        "heavy = [m for m in ('torch', 'neo4j', 'sentence_transformers') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
    for name in kg_platform.__all__:
        assert getattr(kg_platform, name) is not None, name
    assert kg_platform.KnowledgePlatform.__doc__
    with pytest.raises(AttributeError):
        kg_platform.no_such_name  # noqa: B018


def test_py_typed_is_shipped() -> None:
    assert (Path(kg_platform.__file__).parent / "py.typed").exists()


def test_docstring_examples_run() -> None:
    from kg_platform.sdk import platform, reading

    result = doctest.testmod(platform, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0
    result = doctest.testmod(reading, optionflags=doctest.ELLIPSIS)  # the verbs' own examples
    assert result.attempted >= 1 and result.failed == 0


def test_api_reference_builds(tmp_path) -> None:
    pytest.importorskip("pdoc")
    from kg_platform.sdk.apidocs import build_api_docs

    pages = build_api_docs(tmp_path)
    names = {p.name for p in pages}
    assert {"index.html", "platform.html", "langchain.html", "spec.html"} <= names
    page = (tmp_path / "kg_platform" / "sdk" / "platform.html").read_text()
    assert "KnowledgePlatform" in page and "from_env" in page and "retrieve" in page
    # the verbs inherited from the modules they live in are linked from the class's page
    assert 'href="reading.html#ReadVerbs.search"' in page
    assert 'href="writing.html#WriteVerbs.ingest"' in page
