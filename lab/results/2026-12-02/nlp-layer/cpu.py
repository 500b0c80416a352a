"""CPU-seconds of the NLP layer's parse + extraction per paragraph, with and without the parse
(one process, one BLAS thread, as in the parsing child), alternating, two rounds."""

import json
import sys
import time
from kg_platform.distilling.nlp import extract_texts, load_pipeline

N = int(sys.argv[1]) if len(sys.argv) > 1 else 500
rows = []
for line in open("/work/shared/bench/dev/hotpotqa.jsonl"):
    for p in json.loads(line)["paragraphs"]:
        rows.append(("".join(p["sentences"]), p["title"], p["doc_id"]))
rows = rows[:N]
texts, titles, groups = zip(*rows)
out = {}
for mode in (True, False):
    nlp = load_pipeline(parse=mode)
    extract_texts(nlp, ["Warm-up: John Smith moved to Paris."], relations=mode)
for _rnd in range(2):
    for mode in (True, False):
        nlp = load_pipeline(parse=mode)
        t0 = time.process_time()
        res = extract_texts(nlp, list(texts), list(groups), titles=list(titles), relations=mode)
        cpu = time.process_time() - t0
        key = "with_parse" if mode else "without_parse"
        out.setdefault(key, []).append(round(cpu / N * 1000, 2))
        out[key + "_mentions"] = sum(len(r.mentions) for r in res)
        out[key + "_relations"] = sum(len(r.relations) for r in res)
out["paragraphs"] = N
out["pipelines"] = {
    "with_parse": load_pipeline(parse=True).pipe_names,
    "without_parse": load_pipeline(parse=False).pipe_names,
}
print(json.dumps(out))
