#!/bin/bash
# The multi-hop default path (auto -> entity + late rerank over int8 states) at 512 tokens on
# the three dev corpora (qa-late-*), before this session's changes (a worktree at $BEFORE) and
# after: int8's dynamic quantisation scales a model call's activations by the whole call, so
# how texts are split into calls moves int8 states a little (fp32 states do not move).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
root=$PWD
out=$root/lab/results/2026-11-28/retrieve-cpu-papers
before=${BEFORE:-382b4bc}
wt=$(mktemp -d)
git worktree add -q "$wt" "$before"
trap 'git worktree remove --force "$wt"' EXIT
for d in hotpotqa 2wikimultihopqa musique; do
  for side in before after; do
    dir=$root
    [ "$side" = before ] && dir=$wt
    (cd "$dir" && PYTHONPATH="$dir" "$root/.venv/bin/python" -m kg_platform.cli.main lab eval -q \
      --no-ingest --dataset "$root/../shared/bench/dev/$d.jsonl" --corpus "qa-late-$d" \
      --strategy default --budget-tokens 512 --json "$out/multihop-$side-$d.json" \
      --per-question "$out/multihop-$side-$d.jsonl")
  done
done
