"""``kgp lab segmenter train`` (SAGE segmentation model) and ``kgp lab bench segment`` (Pk / WindowDiff)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from kg_platform.cli.lazy import get_settings

segmenter_app = typer.Typer(help="The SAGE semantic segmentation model.", no_args_is_help=True)


def _default_bench() -> Path:
    """The lab's bench folder (``KGP_LAB__BENCH_DIR``, default ``./bench``)."""
    from kg_platform_lab.settings import get_lab_settings

    return get_lab_settings().bench_dir


def register(app: typer.Typer) -> None:
    from kg_platform_lab.cli.bench import bench_group

    app.add_typer(segmenter_app, name="segmenter")
    bench_group(app).command("segment")(bench_segment)


@segmenter_app.command("train")
def train(
    bench: Path = typer.Option(None, "--bench", help="the bench/ folder (dev/corpus, documents)"),
    out: Path = typer.Option(
        None, "--out", help="artifact directory (default: <data_dir>/models/sage/<UTC time>)"
    ),
    seed: int = typer.Option(13, help="seed of the data split, pair sampling and initialisation"),
    epochs: int = typer.Option(20, help="maximum epochs (early stopping on validation loss)"),
    hidden: int = typer.Option(256, help="hidden units of the MLP head"),
    lr: float = typer.Option(1e-3, help="AdamW learning rate of the head"),
    max_pairs: int = typer.Option(None, "--max-pairs", help="cap the training pairs (balanced)"),
) -> None:
    """Train the SAGE pair-scoring head on real paragraphs and write a versioned artifact."""
    from kg_platform_lab.sage.train import train_sage

    settings = get_settings()
    bench = bench or _default_bench()
    out = out or settings.data_dir / "models" / "sage" / time.strftime(
        "v%Y%m%dT%H%M%SZ", time.gmtime()
    )
    result = train_sage(
        settings,
        bench,
        out,
        seed=seed,
        epochs=epochs,
        hidden=hidden,
        lr=lr,
        max_pairs=max_pairs,
        progress=typer.echo,
    )
    typer.echo(
        f"validation pair accuracy {result.metrics['val_pair_accuracy']:.4f}; "
        f"calibrated ss {result.threshold:.2f}"
    )
    typer.echo(
        f"use it with: KGP_SEGMENT__SEGMENTER=sage KGP_SEGMENT__SAGE_MODEL={out} "
        "(its calibrated threshold is in its meta.json)"
    )


def bench_segment(
    bench: Path = typer.Option(None, "--bench", help="the bench/ folder (dev/corpus, documents)"),
    model: Path = typer.Option(
        None, "--model", help="SAGE artifact directory (default: configured)"
    ),
    ss: float = typer.Option(
        None, "--ss", help="SAGE cut threshold (default: segment.sage_threshold)"
    ),
    seed: int = typer.Option(13, help="seed of the held-out split (must match training)"),
    max_docs: int = typer.Option(
        None, "--max-docs", help="use only the first N val/test documents"
    ),
    json_out: Path = typer.Option(None, "--json", help="write the results as JSON here"),
) -> None:
    """Pk and WindowDiff (lower is better) and throughput of SAGE, TextTiling, an embedding-
    similarity threshold and fixed-size chunking on documents of held-out real paragraphs."""
    from kg_platform_lab.evaluation.segmentation import segmentation_benchmark

    settings = get_settings()
    report = segmentation_benchmark(
        settings,
        bench or _default_bench(),
        model_dir=model,
        seed=seed,
        ss=ss,
        max_docs=max_docs,
        progress=typer.echo,
    )
    typer.echo(
        f"\ntest: {report.test_documents} documents, {report.test_sentences} sentences, "
        f"{report.true_segments} true segments"
    )
    typer.echo(
        f"{'method':12s} {'Pk':>7s} {'WinDiff':>8s} {'pairs/s':>10s} {'segments':>9s}  calibrated"
    )
    for r in report.results:
        params = ", ".join(f"{k}={v}" for k, v in report.calibration[r.name].items())
        typer.echo(
            f"{r.name:12s} {r.pk:7.4f} {r.windowdiff:8.4f} {r.pairs_per_s:10.1f} "
            f"{r.n_segments:9d}  {params}"
        )
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.as_json(), indent=2) + "\n")
        typer.echo(f"wrote {json_out}")
