import json
import numpy as np
from kg_platform.config import get_settings
import kg_platform_lab.rerank.chain_study as cs
from kg_platform.retrieval.chain_rerank import link_matrices

cs._SETTINGS = get_settings()
out = {}
for d in ["hotpotqa", "2wikimultihopqa", "musique"]:
    recs = [json.loads(line) for line in open(f"/tmp/chainrank/pools/{d}.jsonl")]
    gold = cs._gold(d)
    st = dict(
        q=0,
        lost=0,
        lost_in16=0,
        lost_in30=0,
        anchor_gold=0,
        lost_linked_anchor=0,
        lost_linked_any_gold_kept=0,
        lost_rank16=[],
    )
    for rec in recs:
        g = gold[rec["id"]]
        st["q"] += 1
        order = cs.order_for(rec, None)
        # kept ids = those within budget
        left = 512
        kept = []
        seen = set()
        for r in order:
            if r["id"] in seen:
                continue
            seen.add(r["id"])
            t = cs._tokens(r["text"])
            kept.append(r["id"])
            if t >= left:
                break
            left -= t
        from kg_platform_lab.evaluation.metrics import normalise

        def para_of(text, g=g):
            return {g[i].paragraph for i, f in enumerate(g) if f.covered_by(normalise(text))}

        kept_paras = (
            set().union(*[para_of(r["text"]) for r in order if r["id"] in kept[:-1]])
            if len(kept) > 1
            else set()
        )
        items = rec["items"]
        title, entity = link_matrices(rec["question"], cs.candidates_of(rec))
        link = np.maximum(title, entity)
        top = [i for i, it in enumerate(items) if it["id"] == order[0]["id"]]
        top = top[0] if top else None
        if top is not None and para_of(items[top]["text"]):
            st["anchor_gold"] += 1
        allp = {f.paragraph for f in g}
        for p in allp - kept_paras:
            st["lost"] += 1
            where = [i for i, it in enumerate(items) if p in para_of(it["text"])]
            if where and where[0] < 16:
                st["lost_in16"] += 1
            if where and where[0] < 30:
                st["lost_in30"] += 1
            if where and top is not None and link[top, where[0]]:
                st["lost_linked_anchor"] += 1
            keptidx = [
                i for i, it in enumerate(items) if it["id"] in kept[:-1] and para_of(it["text"])
            ]
            if where and any(link[k, where[0]] for k in keptidx):
                st["lost_linked_any_gold_kept"] += 1
    st.pop("lost_rank16")
    print(d, st)
