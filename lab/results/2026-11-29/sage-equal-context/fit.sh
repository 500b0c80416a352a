#!/bin/bash
# SAGE over papers, fitted on the train split only: `auto --select sage`, no token budget, the
# first 300 questions of data/ldtrain250. The fixed sum at its shipped g (0.7) sets the context
# to match; the document rerank's probability runs at each g of the grid.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/sage-equal-context
data=${DATA:-/work/data/s26/ldtrain250}
run() {  # run NAME [ENV=VALUE ...]
  local name=$1
  shift
  env "$@" .venv/bin/kgp lab eval -q --no-ingest --dataset "$data" --corpus doc-ldtrain250 \
    --strategy auto --select sage --limit 300 --json "$out/train300-$name.json"
}
run fixed-g0.7 KGP_RERANK__STRUCTURE=off
for g in 0.2 0.3 0.4 0.5; do
  run structure-g$g KGP_SAGE__GRADIENT=$g
done
