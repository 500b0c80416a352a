"""SDK-style retrieve (strategy given by name, as KnowledgePlatform.search passes it): per-call
time with the plug-in scan every call (before) and once per process (after), alternating."""

import statistics
import time
import sys
from pathlib import Path
from kg_platform.config import get_settings
from kg_platform.sdk.platform import KnowledgePlatform
from kg_platform.retrieval import base
from kg_platform.retrieval.pipeline import open_context, retrieve
from kg_platform_lab.evaluation.harness import load_examples

d = sys.argv[1]
_, exs = load_examples(Path(f"../shared/bench/dev/{d}.jsonl"), document_qa=False, limit=None)
with KnowledgePlatform(get_settings()) as kp:
    ctx = open_context(kp.graph, kp.embedder, kp.settings, f"qa-{d}")
    qs = [ex.question for ex in exs[:60]]
    for q in qs:  # warm every text cache: time only what differs
        retrieve(ctx, q, strategy="auto", k=5, select="auto", max_tokens=512)
    t = {"scan every call": [], "scan once": []}
    for q in qs:
        for mode in t:
            t0 = time.perf_counter()
            if mode == "scan every call":
                base._loaded = False
                base.get_strategy("auto", ctx)  # the pipeline's own lookup
                base._loaded = False  # auto's lookup of the strategy it picks
            retrieve(ctx, q, strategy="auto", k=5, select="auto", max_tokens=512)
            t[mode].append((time.perf_counter() - t0) * 1000)
    for mode, v in t.items():
        print(f"{mode:16s} median {statistics.median(v):.1f} ms  mean {statistics.mean(v):.1f} ms")
