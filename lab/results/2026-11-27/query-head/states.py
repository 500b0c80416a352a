"""Frozen MiniLM word-piece states of each pool's question and first 30 candidates, read as the
product's late rerank reads them (section path + text), saved for training a query-side head.

usage: states.py POOLS CORPUS DATA(docqa folder or qa jsonl) OUT STRATEGIES
"""

import pickle
import sys
import time
from pathlib import Path
import numpy as np
from kg_platform.sdk import KnowledgePlatform
from kg_platform.retrieval.late_interaction import reading_texts, _token_states, content_pieces
from kg_platform_lab.rerank.pools import read_pools
from kg_platform_lab.evaluation.docqa import load_docqa
from kg_platform_lab.evaluation.datasets import load_dataset

pools_path, corpus, data, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
strategies = sys.argv[5].split(",")
N = 30
exs = load_docqa(data) if data.is_dir() else load_dataset(data)
question = {q.id: q.question for q in exs}
kp = KnowledgePlatform.from_env()
ctx = kp.retrieval_context(corpus)
pools = [p for p in read_pools(pools_path) if p.strategy in strategies]
rows = []
t0 = time.time()
for i, p in enumerate(pools):
    ids, texts = p.ids[:N], p.texts[:N]
    reading = reading_texts(ids, texts, ctx)
    q = question[p.question_id]
    st = _token_states(ctx.embedder, [q, *reading])
    qv, qt, qo = st[0]
    mask = content_pieces(q, qo)
    rows.append(
        {
            "dataset": p.dataset,
            "question_id": p.question_id,
            "strategy": p.strategy,
            "q_vec": qv.astype(np.float32),
            "q_tok": qt.astype(np.float16),
            "q_mask": mask,
            "c_vec": np.stack([s[0] for s in st[1:]]).astype(np.float32)
            if len(st) > 1
            else np.zeros((0, 384), np.float32),
            "c_tok": [s[1].astype(np.float16) for s in st[1:]],
        }
    )
    if i % 50 == 0:
        print(i, len(pools), round(time.time() - t0), flush=True)
pickle.dump(rows, out.open("wb"), protocol=5)
print("done", len(rows), round(time.time() - t0), flush=True)
