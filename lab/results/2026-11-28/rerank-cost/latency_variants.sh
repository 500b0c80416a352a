#!/usr/bin/env bash
# Idle latency of the default path with the int8 states (rerank.quantize auto) at 30 and 24
# candidates, to split the gain between quantisation and the candidate count. Nothing else runs.
set -u
cd /work/main
source .venv/bin/activate
O=/work/data/s26/latency
K="kgp lab eval -q --no-ingest"
for d in hotpotqa 2wikimultihopqa musique; do
  for n in 30 24; do
    KGP_RERANK__N_CANDIDATES=$n $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d \
      --strategy default --budget-tokens 512 --json $O/int8-n$n-$d.json --per-question $O/int8-n$n-$d.jsonl
  done
done
touch $O/variants.done
