#!/bin/bash
# entity-mogg (the walk's and MoGG's candidates interleaved) with the late rerank, its rank term
# weighted 0, 1 or 2 (weights files made from the shipped one with an `entity-mogg` entry;
# `rN.json` in this folder), 512 tokens, on the qa-late-$d corpora.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=lab/results/2026-11-28/question-keys
for d in hotpotqa 2wikimultihopqa musique; do
  for w in r0 r1 r2; do
    KGP_RERANK__WEIGHTS_FILE=$out/$w.json .venv/bin/kgp lab eval -q --no-ingest \
      --dataset ../shared/bench/dev/$d.jsonl --corpus qa-late-$d --strategy entity-mogg \
      --select late --budget-tokens 512 --json $out/fusion-$w-$d.json \
      --per-question $out/fusion-$w-$d.jsonl
  done
done
