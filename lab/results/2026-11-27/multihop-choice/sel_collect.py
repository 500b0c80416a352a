"""Collect, per multi-hop dev question: the entity strategy's question mentions and seeds, and
mogg's candidates without a router (KGP_MOG__DEFAULT_ROUTER=none) with their late features.
usage: KGP_MOG__DEFAULT_ROUTER=none python sel_collect.py DATASET CORPUS OUT.jsonl"""

import json
import sys
from pathlib import Path

from dev_questions import dev_questions

from kg_platform.retrieval.late_interaction import late_scores

dataset, corpus, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
with out.open("w") as fh:
    for _kp, ctx, ent, mog, ex in dev_questions(dataset, corpus):
        mentions = ent.question_mentions(ex.question)
        _, seeds = ent.seeds(ex.question)
        m_items = list(mog.retrieve(ex.question, 40))
        assert all(p.router_version is None for p in mog.last_plans), "router on"
        _, gcos, gsim = late_scores(
            ex.question, [it.text for it in m_items], ctx, ids=[it.id for it in m_items]
        )
        fh.write(
            json.dumps(
                {
                    "qid": ex.id,
                    "mentions": mentions,
                    "seeds": seeds,
                    "mogg": [[it.id, it.score, it.text] for it in m_items],
                    "mogg_late": [[float(a), float(b)] for a, b in zip(gcos, gsim)],
                }
            )
            + "\n"
        )
