# The int8 entity-name check (README.md); O = this folder, ../layer.py = the helper beside it.
set -e
source .venv/bin/activate
O=.
K="kgp lab eval -q --no-ingest"
for variant in none int8; do
  for d in hotpotqa 2wikimultihopqa musique; do
    python ../layer.py clear qa-$d
    KGP_DISTILL__NAME_QUANTIZE=$variant kgp distill --corpus qa-$d --extractor nlp --json > $O/distill-$d-$variant.json
    python ../layer.py stats qa-$d >> $O/stats-$variant.jsonl
    KGP_DISTILL__NAME_QUANTIZE=$variant $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy entity --budget-tokens 512 --json $O/$d-$variant-none.json --per-question $O/$d-$variant-none.jsonl
    KGP_DISTILL__NAME_QUANTIZE=$variant $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy entity --select late --budget-tokens 512 --json $O/$d-$variant-late.json --per-question $O/$d-$variant-late.jsonl
  done
done
# then int8 names at 0.91 (what ships); run from the repo root, so the paths above are as run there
export KGP_DISTILL__ENTITY_MERGE_COS=0.91
for d in 2wikimultihopqa hotpotqa; do
  python ../layer.py clear qa-$d
  kgp distill --corpus qa-$d --extractor nlp --json > $O/distill-$d-int8-091.json
  python ../layer.py stats qa-$d >> $O/stats-int8-091.jsonl
done
python ../layer.py clear qa-musique
kgp distill --corpus qa-musique --extractor nlp --json > $O/distill-musique-int8-091.json
python ../layer.py stats qa-musique >> $O/stats-int8-091.jsonl
for d in hotpotqa 2wikimultihopqa musique; do
  $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy entity --budget-tokens 512 --json $O/$d-int8-091-none.json --per-question $O/$d-int8-091-none.jsonl
  $K --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy entity --select late --budget-tokens 512 --json $O/$d-int8-091-late.json --per-question $O/$d-int8-091-late.jsonl
done
echo ALLDONE
