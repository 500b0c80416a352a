#!/bin/bash
# SAGE's g for the structure scorer, fitted on the train split only: hybrid --select sage, no
# token budget, the first 300 questions of data/ldtrain250 (QASPER train papers), per g.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-29/sage-structure
data=${DATA:-/work/data/s26/ldtrain250}
for g in 0.01 0.3 0.5 0.7; do
  KGP_SAGE__GRADIENT=$g .venv/bin/kgp lab eval -q --no-ingest --dataset "$data" \
    --corpus doc-ldtrain250 --strategy hybrid --select sage --limit 300 \
    --json $out/train300-structure-g$g.json
done
