"""Offline: the shipped, the cross-fitted and per-strategy document-rerank weights on session 29's
`bench/longdoc` pools (all 306 and the 225 held questions)."""

import json
from pathlib import Path
from kg_platform.graph import GraphClient
from kg_platform.retrieval.structure_rerank import StructureModel, load_model
from kg_platform_lab.cli.commands_rerank import _examples
from kg_platform_lab.evaluation.harness import _seen_in_training, read_id_list
from kg_platform_lab.rerank.fit import Scorer
from kg_platform_lab.rerank.pools import read_pools
from kg_platform_lab.rerank import structure_fit as sf

ex = _examples([Path("/work/shared/bench/longdoc")])
scorer = Scorer(ex, (512, 1024))
HERE = Path(__file__).resolve().parent
pools = read_pools(Path("/work/data/s29/choice/check.jsonl"))
models = {
    "shipped": load_model(),
    "crossfit": StructureModel.from_json(
        json.loads((HERE / "crossfit-structure-rerank.weights.json").read_text()),
        "cf",
    ),
}
for s in ("hybrid", "propagate", "mog"):
    raw = json.loads((HERE / f"per-strategy-{s}.weights.json").read_text())
    models[s] = StructureModel.from_json(raw, s)
with GraphClient.from_settings() as g:
    for strat in ("hybrid", "propagate", "mog"):
        lists = sf.feature_lists([p for p in pools if p.strategy == strat], g)
        print(
            strat,
            "fixed",
            sf.recall(lists, scorer, None),
            {m: sf.recall(lists, scorer, mod) for m, mod in models.items()},
        )

# the questions `kgp lab eval --held-out` leaves out (their papers trained the routers)
trained = read_id_list(HERE.parent.parent / "2026-11-24/default-routers/longdoc-trained-ids.txt")


def seen(p):
    return _seen_in_training(ex[(p.dataset, p.question_id)], trained)


with GraphClient.from_settings() as g:
    for strat in ("hybrid", "propagate", "mog"):
        held = [p for p in pools if p.strategy == strat and not seen(p)]
        lists = sf.feature_lists(held, g)
        print(
            "held",
            len(held),
            strat,
            "fixed",
            sf.recall(lists, scorer, None),
            {
                m: sf.recall(lists, scorer, mod)
                for m, mod in models.items()
                if m in ("shipped", "crossfit", strat)
            },
        )
