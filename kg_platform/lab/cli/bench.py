"""``kgp bench ...``: benchmarks that print ratios against a baseline measured in the same run.

Feature modules add their own sub-commands to :data:`bench_app` from their ``register()``.
"""

import typer

bench_app = typer.Typer(help="Benchmarks (ratios against a baseline measured in the same run).",
                        no_args_is_help=True)
