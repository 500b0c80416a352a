#!/bin/bash
# Pools of auto, entity and mogg (first 30 candidates with late features) on the three multi-hop
# dev corpora (ingested with the defaults and the NLP layer), into $OUT.
set -u
K="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"/.venv/bin/kgp
OUT=${OUT:-/work/data/s32/pools}
BENCH=${BENCH:-/work/shared/bench}
mkdir -p "$OUT" && cd "$OUT"
for d in hotpotqa 2wikimultihopqa musique; do
  $K lab rerank collect --dataset "$BENCH/dev/$d.jsonl" --corpus "qa-late-$d" \
    --strategy auto,entity,mogg --head 30 --fetch 40 --out "$d.jsonl" > "$d.log" 2>&1
done
