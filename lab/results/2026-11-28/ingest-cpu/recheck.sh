#!/bin/bash
# The multi-hop default path after the driver-parameter and BLAS changes (eb3a623, fde4f44), on the
# corpora ingested before them: the question side now parses with numpy's BLAS and sends VectorParams.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/ingest-cpu
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d \
    --strategy default --budget-tokens 512 --json $out/recheck-$d.json --per-question $out/recheck-$d.jsonl
  .venv/bin/kgp lab compare lab/results/2026-11-28/rerank-cost/after-$d.jsonl $out/recheck-$d.jsonl \
    -s default --json $out/cmp-$d-recheck-vs-session26.json > /dev/null
done
