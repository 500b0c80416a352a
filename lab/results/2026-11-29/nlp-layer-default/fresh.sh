#!/usr/bin/env bash
# Fresh corpora of the three multi-hop dev sets, ingested by `kgp lab eval` with the shipped
# defaults (the NLP layer is built over passages by default since session 33), then the default
# path, and `mogg` and `entity` with the late rerank, on each. Results into $OUT.
set -u
K="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"/.venv/bin/kgp
OUT=${OUT:-/work/data/s33}
BENCH=${BENCH:-/work/shared/bench}
mkdir -p "$OUT" && cd "$OUT"
for d in hotpotqa 2wikimultihopqa musique; do
  $K lab eval -q --dataset "$BENCH/dev/$d.jsonl" --corpus "qa-s33-$d" --strategy default \
    --budget-tokens 512 --json "fresh-$d.json" --per-question "fresh-$d.jsonl" > "fresh-$d.log" 2>&1
  $K lab eval -q --no-ingest --dataset "$BENCH/dev/$d.jsonl" --corpus "qa-s33-$d" \
    --strategy mogg,entity --select late --budget-tokens 512 --json "fresh-$d-others.json" \
    --per-question "fresh-$d-others.jsonl" > "fresh-$d-others.log" 2>&1
done
