"""Collect entity and mogg candidates per multi-hop dev question, with the late features of
entity's chunks, mogg's groups and the level-1 chunks mogg's groups sit in (for offline fusion).

usage: python fuse_collect.py DATASET CORPUS OUT.jsonl
"""

import json
import sys
from pathlib import Path

from dev_questions import dev_questions

from kg_platform.retrieval.late_interaction import late_scores

dataset, corpus, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
FETCH = 40
with out.open("w") as fh:
    for kp, ctx, ent, mog, ex in dev_questions(dataset, corpus):
        e_items = list(ent.retrieve(ex.question, FETCH))
        m_items = list(mog.retrieve(ex.question, FETCH))
        pieces = sorted({p for it in m_items for p in it.path})
        rows = (
            kp.graph.read_raw(
                "UNWIND $ids AS id MATCH (p:Piece {id: id}) MATCH (c:Chunk {id: p.chunk_id}) "
                "RETURN id, c.id AS chunk, c.text AS text, c.tokens AS tokens",
                ids=pieces,
            )
            if pieces
            else []
        )
        piece_chunk = {r["id"]: r["chunk"] for r in rows}
        chunk_text = {r["chunk"]: r["text"] for r in rows}
        chunk_text.update({it.id: it.text for it in e_items})
        m_chunks = [[piece_chunk.get(p) for p in it.path] for it in m_items]
        cids = list(chunk_text)
        _, ccos, csim = late_scores(ex.question, [chunk_text[c] for c in cids], ctx, ids=cids)
        _, gcos, gsim = late_scores(
            ex.question, [it.text for it in m_items], ctx, ids=[it.id for it in m_items]
        )
        fh.write(
            json.dumps(
                {
                    "qid": ex.id,
                    "entity": [[it.id, it.score] for it in e_items],
                    "mogg": [[it.id, it.score, it.text, ch] for it, ch in zip(m_items, m_chunks)],
                    "mogg_late": [[float(a), float(b)] for a, b in zip(gcos, gsim)],
                    "chunks": {
                        c: [chunk_text[c], float(a), float(b)] for c, a, b in zip(cids, ccos, csim)
                    },
                }
            )
            + "\n"
        )
