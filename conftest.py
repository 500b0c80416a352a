"""The test suite's root: ``tests/`` (the product) and ``lab/tests/`` (the lab) share one set of
fixtures and hooks, one real Neo4j server per session (``tests/support/fixtures.py``), and under
``--dist loadfile`` one worker for the modules that use the spare server
(``tests/support/spare_worker.py``)."""

pytest_plugins = ["tests.support.fixtures", "tests.support.spare_worker"]
