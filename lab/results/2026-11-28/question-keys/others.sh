#!/bin/bash
# The other strategies given the same late rerank on the same corpora: is the default path
# (auto -> entity + late, keys finder) within 0.01 of the best single strategy on each set?
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy mogg,propagate,mog --select late --budget-tokens 512 \
    --json $out/others-late-$d.json --per-question $out/others-late-$d.jsonl
done
