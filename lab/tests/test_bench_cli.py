"""``kgp lab bench cli`` times whole ``kgp`` processes (the child's own CPU seconds, interleaved
with the baseline), says which heavy libraries the command imported, and refuses to report a
command that failed. (No wall-clock assertion: only that every figure is there and consistent.)

Commands that need no database (``--help`` of two commands) stand in for ``kgp retrieve``, which
the command times by default over the samples."""

from __future__ import annotations

import statistics
import sys

import pytest
from typer.testing import CliRunner

from kg_platform_lab.bench.cli import (
    format_cli_bench,
    imported_packages,
    kgp_command,
    modules_without_bytecode,
    run_cli_bench,
    time_process,
)


def test_a_process_is_timed_by_its_own_cpu_seconds() -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    run = time_process([sys.executable, "-c", burn])
    assert run["exit"] == 0
    assert 0.3 <= run["cpu_s"] < 3 and run["cpu_s"] == pytest.approx(run["user_s"] + run["sys_s"])
    assert run["wall_s"] > 0 and run["max_rss_mb"] > 1
    idle = time_process([sys.executable, "-c", "import time; time.sleep(0.3)"])
    assert idle["wall_s"] >= 0.3 and idle["cpu_s"] < run["cpu_s"], "sleep is not CPU"
    printed = [time_process([sys.executable, "-c", f"print({n})"]) for n in (1, 1, 2)]
    assert printed[0]["stdout_sha256"] == printed[1]["stdout_sha256"] != printed[2]["stdout_sha256"]
    assert time_process([sys.executable, "-c", "raise SystemExit(3)"])["exit"] == 3


def test_imports_are_what_the_command_left_in_sys_modules() -> None:
    """``kgp --help`` imports typer and none of the heavy libraries; the driver's refused
    pandas import (an attempt ``-X importtime`` would log) does not count."""
    watched = ("typer", "torch", "spacy", "numpy", "pandas")
    assert imported_packages(["--help"], watched) == ["typer"]
    with pytest.raises(RuntimeError, match="exited with 2"):
        imported_packages(["no-such-command"])


def test_the_command_is_timed_against_the_baseline_interleaved_with_medians() -> None:
    out = run_cli_bench(["retrieve", "--help"], runs=3, watched=("typer", "torch", "spacy"))
    for side in ("baseline", "result"):
        summary = out[side]
        assert len(summary["runs"]) == 3 and summary["same_stdout"]
        for key in ("cpu_s", "user_s", "sys_s", "wall_s"):
            values = [r[key] for r in summary["runs"]]
            assert summary["median"][key] == pytest.approx(statistics.median(values), abs=1e-3)
        assert summary["median"]["cpu_s"] > 0
    base, ours = out["baseline"]["median"], out["result"]["median"]
    assert out["ratio_vs_baseline"]["cpu_s"] == round(ours["cpu_s"] / base["cpu_s"], 2)
    assert out["ratio_vs_baseline"]["wall_s"] == round(ours["wall_s"] / base["wall_s"], 2)
    assert out["command"] == ["kgp", "retrieve", "--help"]
    assert out["baseline_command"] == ["kgp", "--help"]
    # the untimed run imported the CLI framework, and neither torch nor spaCy
    assert out["heavy_imports"] == ["typer"]
    lines = format_cli_bench(out)
    assert any("cpu-s" in line and "wall-s" in line for line in lines)
    assert any(line.strip().startswith("retrieve") for line in lines)
    assert any("ratio to the baseline" in line for line in lines)


def test_modules_compiled_from_source_on_every_run_are_counted(tmp_path, monkeypatch) -> None:
    """A module without bytecode, or whose source is newer than it, counts; a compiled one
    does not (the bench warns when the product's modules would be compiled in every run)."""
    import compileall
    import os

    package = tmp_path / "scratch_pkg"
    package.mkdir()
    for name in ("__init__", "fresh", "edited", "never"):
        (package / f"{name}.py").write_text("X = 1\n", encoding="utf-8")
    for name in ("__init__", "fresh", "edited"):
        assert compileall.compile_file(str(package / f"{name}.py"), quiet=1)
    later = os.stat(package / "edited.py").st_mtime + 10
    os.utime(package / "edited.py", (later, later))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert modules_without_bytecode("scratch_pkg") == (2, 4)
    assert modules_without_bytecode("no_such_package_here") == (0, 0)
    out = run_cli_bench(["retrieve", "--help"], runs=1, watched=())
    assert set(out["product_modules_without_bytecode"]) == {"stale", "modules"}
    out["product_modules_without_bytecode"] = {"stale": 3, "modules": 200}
    assert any("bytecode: 3 of 200," in line for line in format_cli_bench(out))


def test_a_failing_command_is_an_error_not_a_measurement() -> None:
    with pytest.raises(RuntimeError, match="exited with 2"):
        run_cli_bench(["no-such-command"], runs=1)


def test_kgp_is_started_as_a_user_starts_it() -> None:
    argv = kgp_command()
    assert argv[-1].endswith("kgp") or argv[-2:] == ["-m", "kg_platform.cli.main"]


def test_the_command_refuses_zero_runs_and_reports_a_failed_retrieve() -> None:
    from kg_platform.cli.main import app

    result = CliRunner().invoke(app, ["lab", "bench", "cli", "--runs", "0"])
    assert result.exit_code != 0 and "--runs" in result.output, result.output
    result = CliRunner().invoke(app, ["lab", "bench", "cli", "--help"])
    assert result.exit_code == 0 and "--question" in result.output
