#!/usr/bin/env bash
# Idle latency of the default path on the multi-hop dev sets: before (fp32 states, 30 candidates,
# as shipped until e17029c) and after (rerank.quantize auto + entity's 16), interleaved per set.
# Run with nothing else on the machine.
set -u
cd /work/main
source .venv/bin/activate
O=/work/data/s26/latency
K="kgp lab eval -q --no-ingest"
for d in hotpotqa 2wikimultihopqa musique; do
  $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy default --budget-tokens 512 \
    --json $O/rev-after-$d.json --per-question $O/rev-after-$d.jsonl
  KGP_RERANK__QUANTIZE=none KGP_RERANK__N_CANDIDATES=30 $K --dataset ../shared/bench/dev/$d.jsonl \
    --corpus qa-$d --strategy default --budget-tokens 512 --json $O/rev-before-$d.json --per-question $O/rev-before-$d.jsonl
done
touch $O/rev.done
