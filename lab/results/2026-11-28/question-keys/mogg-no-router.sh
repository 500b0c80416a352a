#!/bin/bash
# mogg + late without the shipped router (which was trained on these dev questions): its fixed
# levels, on the qa-late-$d corpora, 512 tokens. What mogg reads on a corpus nobody trained on.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  KGP_MOG__DEFAULT_ROUTER=none .venv/bin/kgp lab eval -q --no-ingest \
    --dataset ../shared/bench/dev/$d.jsonl --corpus qa-late-$d --strategy mogg --select late \
    --budget-tokens 512 --json $out/mogg-no-router-$d.json --per-question $out/mogg-no-router-$d.jsonl
done
