"""``kgp jobs list|run NAME|status|history|schedule``: declarative ingestion jobs.

Job specs live in ``ingestion/`` (``KGP_JOBS__DIR`` or ``--dir`` for another folder). Exit codes
of ``kgp jobs run``: 0 completed, 1 completed with errors, 2 failed, 3 already running elsewhere
(so cron, systemd and Kubernetes see a locked job as "not run", not as a failure of the data).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer

from kg_platform.cli.lazy import get_settings

app = typer.Typer(
    help="Declarative ingestion jobs: list, run, status, history, schedule.", no_args_is_help=True
)

EXIT_LOCKED = 3

DirOption = typer.Option(
    None, "--dir", help="folder of job specs (default: KGP_JOBS__DIR or ./ingestion)"
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="jobs")


def _dir(directory: Path | None) -> Path:
    return Path(directory or get_settings().jobs.dir)


def _next_fire(spec: Any) -> str:
    trigger = spec.trigger()
    if trigger is None:
        return "manual"
    if not spec.enabled:
        return "disabled"
    nxt = trigger.get_next_fire_time(None, datetime.now(timezone.utc))
    return nxt.strftime("%Y-%m-%d %H:%M %Z") if nxt else "never"


@app.command("list")
def list_jobs(
    directory: Path = DirOption,
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Validate and list every job spec with its schedule and next fire time."""
    from kg_platform.jobs import load_specs

    specs = load_specs(_dir(directory))
    if as_json:
        typer.echo(
            json.dumps(
                [
                    s.model_dump(mode="json") | {"path": str(s.path), "next": _next_fire(s)}
                    for s in specs
                ],
                indent=2,
            )
        )
        return
    if not specs:
        typer.echo(f"no job specs in {_dir(directory).resolve()}")
        return
    for s in specs:
        typer.echo(
            f"{s.name:<20} corpus={s.corpus:<14} schedule={s.schedule or '-':<16} "
            f"next={_next_fire(s)}  ({s.path})"
        )


@app.command("run")
def run(
    name: str = typer.Argument(..., help="job name (or a path to a spec file)"),
    directory: Path = DirOption,
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Run one job now, under its Neo4j lock (exit 3 if it is already running elsewhere)."""
    from kg_platform.errors import JobLocked
    from kg_platform.sdk.platform import KnowledgePlatform

    from kg_platform.cli.signals import Terminated, exit_terminated, sigterm_as_interrupt

    with sigterm_as_interrupt(), KnowledgePlatform(get_settings()) as kp:
        spec = kp.find_job(name, _dir(directory))
        try:
            result = kp.run_job(spec, trigger="manual")
        except Terminated as exc:
            exit_terminated(
                exc,
                f"job {spec.name!r} stopped, its lock released; what it "
                "wrote stays and its next run resumes",
            )
        except JobLocked as exc:
            if as_json:  # a scheduler reading stdout must see why nothing ran
                typer.echo(
                    json.dumps(
                        {
                            "job": spec.name,
                            "run_id": None,
                            "status": "locked",
                            "reason": str(exc),
                            "exit_code": EXIT_LOCKED,
                        }
                    )
                )
            typer.secho(f"skipped: {exc}", fg=typer.colors.YELLOW, err=True)
            raise typer.Exit(EXIT_LOCKED) from None
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "job": result.job,
                    "run_id": result.run_id,
                    "status": result.status,
                    "duration_s": result.duration_s,
                    "llm_tokens": result.llm_tokens,
                    "errors": result.errors,
                    "report": result.report.model_dump() if result.report else None,
                    "distill": result.distill,
                },
                default=str,
            )
        )
    else:
        typer.echo(result.summary())
    raise typer.Exit(result.exit_code)


@app.command("status")
def status(
    directory: Path = DirOption,
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Per job: is it running now (lock holder), its last run, and its next fire time."""
    from kg_platform.jobs import load_specs, lock_states
    from kg_platform.sdk.platform import KnowledgePlatform

    specs = load_specs(_dir(directory))
    rows = []
    with KnowledgePlatform(get_settings()) as kp:
        graph = kp.graph
        locks = lock_states(graph, [s.name for s in specs])
        for s in specs:
            last = graph.read("jobs/history", job=s.name, limit=1)
            lk = locks.get(s.name)
            rows.append(
                {
                    "job": s.name,
                    "running": bool(lk and lk.held),
                    "holder": lk.owner if lk and lk.held else None,
                    "last_run": last[0]["id"] if last else None,
                    "last_status": last[0]["status"] if last else None,
                    "last_started": last[0]["started"] if last else None,
                    "next": _next_fire(s),
                }
            )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        state = f"RUNNING on {r['holder']}" if r["running"] else "idle"
        last = (
            f"last {r['last_status']} at {r['last_started']} ({r['last_run']})"
            if r["last_run"]
            else "never run"
        )
        typer.echo(f"{r['job']:<20} {state:<12} {last}; next {r['next']}")


@app.command("history")
def history(
    name: str = typer.Argument(None, help="job name (default: all jobs)"),
    limit: int = typer.Option(20, "-n", "--limit", help="number of runs"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """The latest runs ((:IngestRun) nodes) of a job: status, counts, errors, tokens, duration."""
    from kg_platform.sdk.platform import KnowledgePlatform

    with KnowledgePlatform(get_settings()) as kp:
        rows = [dict(r) for r in kp.graph.read("jobs/history", job=name, limit=limit)]
    for r in rows:
        for key in ("counts", "errors"):
            try:
                r[key] = json.loads(r[key]) if r[key] else ({} if key == "counts" else [])
            except (TypeError, ValueError):
                pass
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        typer.echo("no job runs recorded" + (f" for {name!r}" if name else ""))
        return
    for r in rows:
        c = r["counts"] if isinstance(r["counts"], dict) else {}
        dur = f"{r['duration_s']:.1f}s" if r["duration_s"] is not None else "-"
        typer.echo(
            f"{(r['started'] or '')[:19]:<20} {r['job']:<16} {r['status']:<22} "
            f"{dur:>8}  +{c.get('added', 0)} ~{c.get('replaced', 0)} "
            f"={c.get('skipped', 0)} !{c.get('failed', 0)}  tokens={r['tokens'] or 0}"
            f" llm={r['llm_tokens'] or 0}  {r['id']}"
        )
        for e in r["errors"] if isinstance(r["errors"], list) else []:
            typer.echo(f"    ! {e.get('path') or '-'}: {e.get('error')}: {e.get('reason')}")


@app.command("schedule")
def schedule(
    directory: Path = DirOption,
    only: list[str] = typer.Option(None, "--only", help="schedule only these jobs"),
    run_now: bool = typer.Option(
        False, "--run-now", help="also run every selected job once at start"
    ),
    grace: float = typer.Option(
        60.0, help="seconds a running job may finish after SIGTERM before the process leaves"
    ),
    max_seconds: float = typer.Option(None, help="stop after this long (testing)"),
) -> None:
    """Run the scheduler: fire due jobs until SIGTERM/SIGINT (JSON event lines on stdout)."""
    from kg_platform.jobs.scheduler import JobScheduler
    from kg_platform.sdk.platform import KnowledgePlatform

    settings = get_settings()
    with KnowledgePlatform(settings) as kp:
        code = JobScheduler(settings, _dir(directory), only=only, run_now=run_now, platform=kp).run(
            grace_s=grace, max_seconds=max_seconds
        )
    raise typer.Exit(code)
