"""Claims the manuals and the image make about the code, checked against the code: an extra the
Dockerfile installs exists, a default a manual quotes is the default, two servers do not share a
default port."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _extras() -> dict[str, list[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["optional-dependencies"]


def _dockerfile_extras() -> set[str]:
    text = (REPO / "docker" / "Dockerfile").read_text()
    found = re.findall(r"""pip install\s+["']?\.\[([^\]]+)\]""", text)
    assert found, "the Dockerfile installs the product with no extras list"
    return {e.strip() for group in found for e in group.split(",")}


def test_the_dockerfile_installs_only_extras_that_exist() -> None:
    unknown = _dockerfile_extras() - set(_extras())
    assert unknown == set(), f"docker/Dockerfile installs extras pyproject.toml lacks: {unknown}"


def test_the_image_holds_what_the_all_extra_holds() -> None:
    """The image is the product with every runtime extra (`all`), so its CLI, servers and the
    NLP distilled layer work as a full install does."""
    (members,) = re.findall(r"kg-platform\[([^\]]+)\]", " ".join(_extras()["all"]))
    everything = {m.strip() for m in members.split(",")}
    assert "nlp" in everything
    assert everything - _dockerfile_extras() == set()


def test_the_entity_merge_threshold_in_the_llm_manual_is_the_default() -> None:
    from kg_platform.tuning import Tuning

    text = (REPO / "docs" / "llm.md").read_text()
    match = re.search(r"name-embedding cosine >= ([0-9.]+)", text)
    assert match, "docs/llm.md no longer quotes the entity merge threshold"
    assert float(match.group(1)) == Tuning().distill.entity_merge_cos


def test_the_kill_count_in_the_operations_manual_is_the_suites() -> None:
    suite = (REPO / "tests" / "faults" / "test_kill_ingest.py").read_text()
    (default,) = re.findall(r"""KGP_FAULT_KILLS"\) or \(60 if soak\(\) else (\d+)\)""", suite)
    text = (REPO / "docs" / "operations.md").read_text()
    assert f"60 kill points instead of {default}," in text
    assert f"| test_kill_ingest | {default} kills" in text


def test_the_http_api_mcp_and_guide_servers_default_to_distinct_ports() -> None:
    from kg_platform.cli.commands_browser import GUIDE_PORT
    from kg_platform.config import ServeSettings

    serve = ServeSettings()
    ports = [serve.port, serve.mcp_port, GUIDE_PORT]
    assert len(set(ports)) == len(ports), ports
