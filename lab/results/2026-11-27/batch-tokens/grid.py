"""Seconds to embed the same texts at several embedding.batch_tokens values (idle, 2 cores).

Texts: 400 level-1 chunks of qa-musique (~80 word pieces), 400 level-1 and 400 level-2 chunks of
doc-longdoc (~200 and 256 pieces), read from the local Neo4j; and the late rerank's case, ten
lists of 30 MuSiQue chunks through embed_tokens. 10**9 stands for the code before the change
(64 texts per call whatever their length). Asserts that the vectors do not change.

Run from the repo root: python lab/results/2026-11-27/batch-tokens/grid.py
"""

import time

import numpy as np

from kg_platform.config import default_cache_dir
from kg_platform.embedding.onnx import OnnxEmbedder
from kg_platform.sdk import KnowledgePlatform

kp = KnowledgePlatform.from_env()
emb = OnnxEmbedder("all-MiniLM-L6-v2", cache_dir=default_cache_dir())
sets = {}
for corpus, level in (("qa-musique", 1), ("doc-longdoc", 1), ("doc-longdoc", 2)):
    sets[f"{corpus}-l{level}"] = [
        r["t"]
        for r in kp.graph.driver.execute_query(
            "MATCH (c:Chunk {corpus: $c, level: $l}) RETURN c.text AS t SKIP 1000 LIMIT 400",
            c=corpus,
            l=level,
        ).records
    ]
reference: dict[str, np.ndarray] = {}
print("batch_tokens | embed 400 MuSiQue / longdoc l1 / longdoc l2 (s) | 30-candidate rerank (ms)")
for batch_tokens in (10**9, 256, 512, 1024, 2048, 4096, 10**9):
    emb.batch_tokens = batch_tokens
    row = []
    for name, texts in sets.items():
        start = time.perf_counter()
        vectors = emb.embed(texts)
        row.append(round(time.perf_counter() - start, 2))
        if name in reference:
            assert np.abs(vectors - reference[name]).max() < 1e-5
        else:
            reference[name] = vectors
    start = time.perf_counter()
    for i in range(0, 300, 30):
        emb.embed_tokens(sets["qa-musique-l1"][i : i + 30])
    print(batch_tokens, row, round((time.perf_counter() - start) * 100))
