"""``kgp lab bench cli``: what one ``kgp retrieve`` costs as a whole process, against ``kgp --help``.

Why a whole process: a user who types ``kgp retrieve`` pays for the interpreter, every import,
the settings, the driver's connection, the ONNX sessions and the rerank, not only for the
retrieval a warm SDK measures. Each run is a fresh ``kgp`` process; its CPU seconds are the
kernel's account of that child alone (``wait4``: user + system, all its threads), which a
machine shared with other work inflates far less than wall time. ``kgp --help`` is the baseline,
timed in the same run and interleaved with the command (help, command, help, command, ...), so a
change of load hits both alike. Medians of ``runs``.

One more run, untimed, reports which of the heavy libraries (:data:`WATCHED`) the command left in
``sys.modules`` when it exited: the retrieve path must import neither torch nor spaCy. (Not
``-X importtime``: it logs attempts too, such as the driver's pandas import that ``kgp`` refuses.) Every timed run of a command must print the same stdout (compared by
digest), so what was timed is one answer, not a run that failed or changed half way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_QUESTION",
    "WATCHED",
    "format_cli_bench",
    "imported_packages",
    "modules_without_bytecode",
    "kgp_command",
    "run_cli_bench",
    "time_process",
]

DEFAULT_QUESTION = "What file formats can MarkItDown convert?"
#: libraries the retrieve path must not import (torch, spaCy) and others worth knowing about
WATCHED = ("torch", "spacy", "thinc", "transformers", "sentence_transformers", "scipy", "pandas")
#: the goal of issue 57 for one ``kgp retrieve`` over the samples, CPU seconds (median)
GOAL_CPU_S = 1.0

#: runs ``kgp``'s entry point as the console script does (without the working directory on
#: ``sys.path``, which ``-c`` puts first) and writes the watched packages it imported to a file
_MODULES_CHILD = """
import atexit, json, sys
sys.path.pop(0)
report, watched = sys.argv[1], json.loads(sys.argv[2])
def _report():
    with open(report, "w") as f:
        json.dump([n for n in watched if n in {m.split(".")[0] for m in sys.modules}], f)
atexit.register(_report)
sys.argv = ["kgp", *sys.argv[3:]]
from kg_platform.cli.main import main
main()
"""


def kgp_command() -> list[str]:
    """How to start ``kgp`` as a user does: the console script beside this interpreter (its
    ``sys.path`` starts at the script's folder, not the working directory), else the one on
    ``PATH``, else ``python -m kg_platform.cli.main``."""
    beside = Path(sys.executable).with_name("kgp")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("kgp")
    if found:
        return [found]
    return [sys.executable, "-m", "kg_platform.cli.main"]


def time_process(
    argv: Sequence[str], env: Mapping[str, str] | None = None, stderr_to: Path | None = None
) -> dict[str, Any]:
    """Run ``argv`` once: its CPU seconds (user, sys, both: the child's own rusage), wall
    seconds, peak memory, exit code and a digest of its stdout."""
    with tempfile.TemporaryFile() as out, open(stderr_to or os.devnull, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(list(argv), stdout=out, stderr=err, env=dict(env or os.environ))
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        digest = hashlib.sha256(out.read()).hexdigest()[:16]
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "wall_s": wall,
        "max_rss_mb": usage.ru_maxrss / 1024,
        "exit": child.returncode,
        "stdout_sha256": digest,
    }


def imported_packages(args: Sequence[str], watched: Sequence[str] = WATCHED) -> list[str]:
    """Which of ``watched`` (top-level package names) ``kgp <args>`` had imported when it
    exited (one run, in this interpreter's environment). Raises RuntimeError if it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "modules.json"
        done = subprocess.run(
            [sys.executable, "-c", _MODULES_CHILD, str(report), json.dumps(list(watched)), *args],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not report.exists():
            raise RuntimeError(
                f"`kgp {shlex.join(args)}` exited with {done.returncode}: {done.stderr[-2000:]}"
            )
        found: list[str] = json.loads(report.read_text())
    return found


def modules_without_bytecode(package: str = "kg_platform") -> tuple[int, int]:
    """(modules whose cached bytecode is missing or older than their source, modules) of the
    installed ``package``. An editable install keeps the product's modules in the checkout,
    where no installer compiles them; with ``PYTHONDONTWRITEBYTECODE`` set each ``kgp`` process
    then compiles them again (about 0.1 CPU-s per run), which a wheel install never pays."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return 0, 0
    sources = [p for root in spec.submodule_search_locations for p in Path(root).rglob("*.py")]
    stale = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            stale += 1
    return stale, len(sources)


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "median": {k: _median(runs, k) for k in ("cpu_s", "user_s", "sys_s", "wall_s")},
        "max_rss_mb": round(max(r["max_rss_mb"] for r in runs), 1),
        "runs": [
            {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()} for r in runs
        ],
        "same_stdout": len({r["stdout_sha256"] for r in runs}) == 1,
    }


def run_cli_bench(
    args: Sequence[str],
    *,
    runs: int = 5,
    baseline: Sequence[str] = ("--help",),
    kgp: Sequence[str] | None = None,
    watched: Sequence[str] = WATCHED,
) -> dict[str, Any]:
    """Time ``kgp <args>`` and ``kgp <baseline>`` ``runs`` times each, interleaved; then one
    untimed run of ``args`` for :func:`imported_packages`.

    Raises RuntimeError (with the end of its stderr) when a run of either command fails: a
    failed command is not a measurement."""
    if runs < 1:
        raise ValueError("runs must be >= 1")
    kgp = list(kgp or kgp_command())
    timed: dict[str, list[dict[str, Any]]] = {"baseline": [], "command": []}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        err = Path(tmp) / "stderr"
        for _ in range(runs):
            for name, argv in (("baseline", baseline), ("command", args)):
                run = time_process([*kgp, *argv], stderr_to=err)
                if run["exit"] != 0:
                    tail = err.read_text(errors="replace")[-2000:]
                    raise RuntimeError(
                        f"`kgp {shlex.join(argv)}` exited with {run['exit']}: {tail.strip()}"
                    )
                timed[name].append(run)
    imports = imported_packages(args, watched)
    stale, modules = modules_without_bytecode()
    load_after = os.getloadavg()
    base, command = _summary(timed["baseline"]), _summary(timed["command"])
    ratio = {
        key: round(command["median"][key] / base["median"][key], 2)
        if base["median"][key] > 0
        else None
        for key in ("cpu_s", "wall_s")
    }
    return {
        "command": ["kgp", *args],
        "baseline_command": ["kgp", *baseline],
        "runs": runs,
        "cpus": os.cpu_count(),
        "load_1min": {"before": round(load_before[0], 2), "after": round(load_after[0], 2)},
        "baseline": base,
        "result": command,
        "ratio_vs_baseline": ratio,
        "heavy_imports": imports,
        "product_modules_without_bytecode": {"stale": stale, "modules": modules},
        "watched": list(watched),
        "goal_cpu_s": GOAL_CPU_S,
    }


def format_cli_bench(out: dict[str, Any]) -> list[str]:
    """The result as a small table: medians of CPU (user+sys), user, sys and wall seconds."""
    load = out["load_1min"]

    def row(label: str, summary: dict[str, Any]) -> str:
        m = summary["median"]
        return (
            f"  {label:<14} {m['cpu_s']:>8.2f} {m['user_s']:>6.2f} {m['sys_s']:>6.2f} "
            f"{m['wall_s']:>7.2f} {summary['max_rss_mb']:>7.0f}"
        )

    ratio = out["ratio_vs_baseline"]
    heavy = out["heavy_imports"]
    lines = [
        shlex.join(out["command"]),
        f"  whole processes, median of {out['runs']}, interleaved with "
        f"`{shlex.join(out['baseline_command'])}`; {out['cpus']} CPUs, load (1 min) "
        f"{load['before']} -> {load['after']}",
        f"  {'':<14} {'cpu-s':>8} {'user':>6} {'sys':>6} {'wall-s':>7} {'rss-MB':>7}",
        row(" ".join(out["baseline_command"][1:]) or "kgp", out["baseline"]),
        row(out["command"][1] if len(out["command"]) > 1 else "kgp", out["result"]),
        f"  ratio to the baseline: {ratio['cpu_s']}x CPU, {ratio['wall_s']}x wall",
    ]
    if out["command"][1:2] == ["retrieve"]:
        lines.append(
            f"  goal: at most {out['goal_cpu_s']:.1f} CPU-s (median) for one `kgp retrieve`; "
            f"this run: {out['result']['median']['cpu_s']:.2f}"
        )
    lines += [
        "  imported of " + ", ".join(out["watched"]) + ": " + (", ".join(heavy) or "none"),
    ]
    bytecode = out.get("product_modules_without_bytecode") or {}
    if bytecode.get("stale"):
        lines.append(
            f"  warning: product modules without current bytecode: {bytecode['stale']} of "
            f"{bytecode['modules']}, compiled from source in every run "
            "(`python -m compileall kg_platform`, as `make install` does)"
        )
    if not out["result"]["same_stdout"]:
        lines.append("  warning: the command's stdout differed between runs")
    return lines
