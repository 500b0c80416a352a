"""The test suite's root: ``tests/`` (the product) and ``lab/tests/`` (the lab) share one set of
fixtures and hooks, one real Neo4j server per session (``tests/support/fixtures.py``)."""

pytest_plugins = ["tests.support.fixtures"]
