"""spaCy's parse of the 776 level-1 chunks of 50 HotpotQA dev questions with thinc's blis or with
numpy's BLAS for the layers' matrix products (run from the repo root with OPENBLAS_NUM_THREADS=1,
idle, after `nlp_prof.py --keep` of lab/results/2026-11-27/nlp-ingest/ left the corpus
`prof-nlp`): `python parse_ops.py blis` / `python parse_ops.py numpy`. Prints the extraction's CPU
and a hash of its output, which must match between the two."""

import hashlib
import json
import sys
import time

from kg_platform.graph import GraphClient

with GraphClient.from_settings() as g:
    texts = [
        r["t"]
        for r in g.read_raw(
            "MATCH (c:Chunk {corpus: 'prof-nlp', level: 1}) RETURN c.text AS t ORDER BY c.id"
        )
    ]
import spacy
from thinc.api import use_ops

from kg_platform.distilling.nlp import DEFAULT_MODEL, extract_texts
from kg_platform.distilling.nlp_pos import install

with use_ops("numpy", use_blis=sys.argv[1] == "blis"):
    nlp = spacy.load(DEFAULT_MODEL, exclude=["senter", "lemmatizer"])
install(nlp)
started = time.process_time()
outs = extract_texts(nlp, texts, None)
cpu = time.process_time() - started
digest = hashlib.md5(
    json.dumps(
        [[(m.key, m.type, m.count) for m in o.mentions] + o.relations for o in outs]
    ).encode()
).hexdigest()
print(f"{sys.argv[1]}: {len(texts)} chunks, {cpu:.2f} CPU-s, output {digest}")
