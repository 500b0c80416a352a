"""Profile the NLP step on the paragraphs of 50 HotpotQA dev questions (run from the repo root,
idle machine): ingest without the layer into `prof-nlp`, then run the step under cProfile."""

import time
import sys
import cProfile
import pstats
from pathlib import Path
from kg_platform.config import get_settings
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient
from kg_platform_lab.qa_ingest import ingest_qa
from kg_platform.ingest.writer import drop_corpus
from kg_platform.distilling.nlp_step import extract_entities_nlp

s = get_settings()
emb = get_embedder(s.embedding)
emb.embed(["warm"])
corpus = "prof-nlp"
with GraphClient.from_settings(s) as g:
    drop_corpus(g, corpus)
    t = time.perf_counter()
    ingest_qa(g, s, Path("../shared/bench/dev/hotpotqa.jsonl"), corpus, limit=50, embedder=emb)
    print("ingest without", round(time.perf_counter() - t, 2))
    pr = cProfile.Profile()
    t = time.perf_counter()
    pr.enable()
    rep = extract_entities_nlp(g, emb, s, corpus=corpus)
    pr.disable()
    print(
        "nlp step",
        round(time.perf_counter() - t, 2),
        rep.timings,
        rep.chunks,
        rep.written,
        rep.relations,
    )
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
    if "--keep" not in sys.argv:
        drop_corpus(g, corpus)
