"""The ``kgp`` process imports the neo4j driver without pandas (the CLI never uses the driver's
pandas support), and pandas still imports normally afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pandas", reason="nothing to hide without pandas installed")

_CHILD = textwrap.dedent(
    """
    import json, sys
    from kg_platform.cli import driver_imports
    if sys.argv[1] == "cli":
        driver_imports.install()
    import neo4j
    from neo4j import _optional_deps
    driver_saw_pandas = _optional_deps.pd is not None
    loaded_with_driver = "pandas" in sys.modules
    import pandas
    print(json.dumps({
        "driver_saw_pandas": driver_saw_pandas,
        "loaded_with_driver": loaded_with_driver,
        "pandas_later": pandas.DataFrame is not None,
        "finder_left": any(type(f).__name__ == "_HideFromDriver" for f in sys.meta_path),
    }))
    """
)


def _run(mode: str) -> dict[str, bool]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_cli_imports_the_driver_without_pandas_and_pandas_still_imports_later():
    cli = _run("cli")
    assert cli == {
        "driver_saw_pandas": False,
        "loaded_with_driver": False,
        "pandas_later": True,
        "finder_left": False,
    }


def test_a_library_process_is_left_alone():
    library = _run("library")
    assert library["driver_saw_pandas"] is True and library["loaded_with_driver"] is True
