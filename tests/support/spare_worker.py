"""One xdist worker for every module that uses the spare Neo4j server (``spare_neo4j``).

``make test`` runs ``pytest -n 2 --dist loadfile``: each module goes to one worker, so its module
fixtures run once. The spare server is a session fixture, so every worker that runs a module
using it starts its own spare: a fresh home (two JVM starts) and a cold JIT for each. Under
``--dist loadfile`` this plugin's scheduler sends all those modules to one worker, which starts
one spare for them all.

Why a scheduler and not ``--dist loadgroup`` with ``xdist_group`` marks: loadgroup passes the
group as a suffix written into each test's node id, which pytest 9.2's structured node ids no
longer take (pytest-dev/pytest-xdist#1386, open on 2026-12-06), so the marks are silently ignored.

The controller does not collect tests, so it finds the modules by their source: a module that
uses the fixture names it (as a parameter or in ``usefixtures``). A check at each test's setup
makes the scan's blind spot (a module reaching the spare only through another fixture file) a
failed test instead of a silent second spare.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: The session fixture every spare-using test depends on, and the one tests request.
SPARE_SERVER_FIXTURE = "spare_neo4j_server"
SPARE_FIXTURES = ("spare_neo4j", SPARE_SERVER_FIXTURE)
SPARE_GROUP = "spare-neo4j"


def _module_id(path: Path, root: Path) -> str:
    """A test module as node ids name it: its path relative to the root, with ``/``."""
    return path.relative_to(root).as_posix()


def spare_modules(config: pytest.Config) -> frozenset[str]:
    """The test modules (paths relative to the root, as in node ids) that name a spare fixture,
    found under the configured ``testpaths``."""
    root = config.rootpath
    found = set()
    for top in config.getini("testpaths"):
        for path in (root / top).rglob("test_*.py"):
            if any(name in path.read_text(encoding="utf-8") for name in SPARE_FIXTURES):
                found.add(_module_id(path, root))
    return frozenset(found)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # log: xdist's Producer
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpareSharingFileScheduling(LoadFileScheduling):
        """``--dist loadfile``, except that the spare server's modules are one work unit."""

        modules = spare_modules(config)

        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return SPARE_GROUP if module in self.modules else module

    return SpareSharingFileScheduling(config, log)


_NAMED = pytest.StashKey[frozenset[str]]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a test that uses the spare from a module the scan missed. At setup, not at
    collection: an error raised while an xdist worker collects crashes it without a message."""
    if SPARE_SERVER_FIXTURE not in item.fixturenames:
        return
    config = item.config
    if _NAMED not in config.stash:
        config.stash[_NAMED] = spare_modules(config)
    module = _module_id(item.path, config.rootpath)
    if module not in config.stash[_NAMED]:
        pytest.fail(
            f"{item.nodeid} uses the spare Neo4j server without naming a spare fixture in its "
            f"module: name `spare_neo4j` in {module} (tests/support/spare_worker.py finds the "
            "modules that share one spare by their source)",
            pytrace=False,
        )
