"""Build the API reference (HTML) of the public surface from its docstrings, with pdoc.

``python -m kg_platform.sdk.apidocs docs/api`` writes one page per public module; the test suite
builds it too (``tests/unit/test_sdk.py``), so a broken docstring or import fails CI. Only the
user-facing modules are documented: internals change freely.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The public surface, in reading order.
PUBLIC_MODULES = (
    "kg_platform",
    "kg_platform.sdk.platform",
    # its verbs, by what they do (KnowledgePlatform's page links each inherited one here)
    "kg_platform.sdk.writing",
    "kg_platform.sdk.reading",
    "kg_platform.sdk.parts",
    "kg_platform.integrations.langchain",
    "kg_platform.jobs.spec",
    "kg_platform.jobs.runner",
    "kg_platform.graph.lock",
    "kg_platform.jobs.scheduler",
    "kg_platform.browser.guide",
    "kg_platform.retrieval.base",
    "kg_platform.config",
    "kg_platform.errors",
)


def build_api_docs(out_dir: Path | str) -> list[Path]:
    """Render the API reference into ``out_dir``; return the HTML files written."""
    try:
        import pdoc
    except ImportError as exc:
        from kg_platform.errors import ConfigError

        raise ConfigError(
            "building the API reference needs pdoc",
            hint="pip install -e '.[dev]' in the kg-platform repository",
        ) from exc
    out = Path(out_dir)
    pdoc.render.configure(
        docformat="google", footer_text="kg-platform API reference", search=True, show_source=False
    )
    pdoc.pdoc(*PUBLIC_MODULES, output_directory=out)
    return sorted(out.rglob("*.html"))


def main() -> None:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/api")
    files = build_api_docs(target)
    print(f"{len(files)} pages in {target}/ (open {target / 'index.html'})")


if __name__ == "__main__":
    main()
