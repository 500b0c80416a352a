#!/bin/bash
# propagate + late on the multi-hop dev sets: shipped weights vs the paper fit (D kept at 0.35); hybrid on longdoc, same sitting
cd /work/main && source .venv/bin/activate
O=/work/data/s24/evals
FIT="KGP_PROPAGATION__LAM_C=0.0 KGP_PROPAGATION__LAM_P=0.5 KGP_PROPAGATION__LAM_I=1.0 KGP_PROPAGATION__LAM_T=0.15"
mh() { d=$1; name=$2; shift 2
  env "$@" kgp lab eval -q --no-ingest --dataset ../shared/bench/dev/$d.jsonl --corpus qa-$d --strategy propagate --select late --budget-tokens 512 --json $O/$d-$name.json --per-question $O/$d-$name.jsonl > $O/$d-$name.log 2>&1
}
kgp lab eval -q --no-ingest --dataset ../shared/bench/longdoc --corpus doc-longdoc --strategy hybrid --select late --budget-tokens 1024 --json $O/longdoc-hybrid.json --per-question $O/longdoc-hybrid.jsonl > $O/longdoc-hybrid.log 2>&1 &
mh hotpotqa fit1 $FIT
wait
for d in 2wikimultihopqa musique; do mh $d fit1 $FIT & mh $d shipped KGP_X=1; wait; done
mh hotpotqa shipped KGP_X=1
echo DONE > $O/mh.done
