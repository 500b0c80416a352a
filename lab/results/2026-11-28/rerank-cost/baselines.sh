#!/usr/bin/env bash
# plain baselines + the late rerank as shipped after e17029c (int8 states on passages), recall only
set -u
cd /work/main
source .venv/bin/activate
O=/work/data/s26/evals
for d in hotpotqa 2wikimultihopqa musique; do
  kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d \
    --strategy hybrid,vector,bm25 --select late --budget-tokens 512 \
    --json $O/baselines-$d.json --per-question $O/baselines-$d.jsonl
done
touch $O/baselines.done
