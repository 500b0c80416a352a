"""Collect, per multi-hop dev question: the entity strategy's question mentions and seeds, and
mogg's candidates without a router (KGP_MOG__DEFAULT_ROUTER=none) with their late features.
usage: KGP_MOG__DEFAULT_ROUTER=none python sel_collect.py DATASET CORPUS OUT.jsonl"""

import json
import sys
import time
from pathlib import Path

from kg_platform.config import get_settings
from kg_platform.retrieval.base import RetrievalContext, get_strategy
from kg_platform.retrieval.late_interaction import late_scores
from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform_lab.evaluation.harness import load_examples

dataset, corpus, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
with KnowledgePlatform(get_settings()) as kp, out.open("w") as fh:
    _, examples = load_examples(dataset, document_qa=False, limit=None)
    ctx = RetrievalContext(
        graph=kp.graph, embedder=kp.embedder, settings=kp.settings, corpus=corpus
    )
    ent, mog = get_strategy("entity", ctx), get_strategy("mogg", ctx)
    t0 = time.time()
    for i, ex in enumerate(examples):
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
        print(i, round(time.time() - t0, 1), file=sys.stderr, flush=True)
