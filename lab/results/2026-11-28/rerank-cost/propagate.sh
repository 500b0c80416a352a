#!/usr/bin/env bash
set -u
cd /work/main
source .venv/bin/activate
O=/work/data/s26/evals
while [ ! -f $O/baselines.done ]; do sleep 10; done
for d in hotpotqa 2wikimultihopqa musique; do
  kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d \
    --strategy propagate --select late --budget-tokens 512 \
    --json $O/propagate-$d.json --per-question $O/propagate-$d.jsonl
done
touch $O/propagate.done
