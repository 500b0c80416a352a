#!/usr/bin/env bash
# level-1 size fit: ingest the 100-paper train sample at 96/128/192, then eval default path with head+structure off
set -u
cd /work/main
source .venv/bin/activate
D=/work/data/s33
export KGP_DISTILL__NLP_ON_INGEST=false
for t in 128 96 192; do
  KGP_SEGMENT__CHUNK_TOKENS=$t /usr/bin/time -v kgp ingest $D/ldtrain100/papers --corpus doc-ldt100-c$t > $D/ingest-ldt100-c$t.log 2>&1
done
for t in 128 96 192; do
  for b in 512 1024; do
    KGP_SEGMENT__CHUNK_TOKENS=$t KGP_RERANK__QUERY_HEAD=off KGP_RERANK__STRUCTURE=off \
      kgp lab eval -q --no-ingest --dataset $D/ldtrain100 --corpus doc-ldt100-c$t --strategy default \
      --budget-tokens $b --json $D/fit-c$t-b$b.json --per-question $D/fit-c$t-b$b.jsonl > $D/fit-c$t-b$b.log 2>&1
  done
done
touch $D/fit.done
