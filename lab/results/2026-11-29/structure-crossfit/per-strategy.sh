#!/bin/bash
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
C=/work/data/s29/choice
for s in hybrid propagate mog; do
  .venv/bin/kgp lab rerank fit-structure --pools $C/train250.jsonl --dataset /work/data/s26/ldtrain250 \
    --pools $C/train-rest.jsonl --dataset /work/data/s29/ldtrain-rest \
    --check-pools $C/check.jsonl --check-dataset /work/shared/bench/longdoc \
    --strategy $s --out ${OUT:-/work/data/s32/perstrat}/$s > ${OUT:-/work/data/s32/perstrat}/$s.log 2>&1
done

