#!/bin/bash
# Every single strategy with the late rerank, 512 tokens, on the three multi-hop dev corpora,
# with this session's rerank (int8 candidates read one per call): what issue 31's "default
# within 0.01 of the best single strategy" is measured against.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/int8-alone
for d in hotpotqa 2wikimultihopqa musique; do
  .venv/bin/kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-late-$d --strategy bm25,vector,hybrid,mogg,propagate,mog,entity --select late \
    --budget-tokens 512 --json $out/singles-late-$d.json --per-question $out/singles-late-$d.jsonl
done
