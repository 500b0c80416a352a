"""The int8 copy's calls one after another (the code before) or side by side (after): 30 rerank
candidates of each of 30 bench/longdoc questions (session 29's pools) and 4,000 entity names of
qa-late-hotpotqa, wall and CPU; hashes show the outputs are the same. Run from a checkout (and
from a worktree of the code before, through PYTHONPATH), idle, local Neo4j up."""

import hashlib
import json
import resource
import time

from kg_platform.config import default_cache_dir, get_settings
from kg_platform.embedding.onnx import OnnxEmbedder
from kg_platform.graph import GraphClient


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


s = get_settings()
with open("/work/data/s29/choice/check.jsonl") as f:
    rows = [json.loads(line) for line in f][:90:3]
lists = [r["texts"][:30] for r in rows]
with GraphClient.from_settings() as g:
    names = [
        r["n"]
        for r in g.read_raw(
            "MATCH (e:Entity {corpus:'qa-late-hotpotqa'}) RETURN e.name AS n ORDER BY e.id LIMIT 4000"
        )
    ]
e = OnnxEmbedder(
    s.embedding.model,
    cache_dir=default_cache_dir(),
    quantize="int8",
    batch_size=s.embedding.batch_size,
    batch_tokens=s.embedding.batch_tokens,
)
e.embed_tokens(lists[0][:2])
w0, c0 = time.perf_counter(), cpu()
for texts in lists:
    e.embed_tokens(texts)
per_list = (
    round((time.perf_counter() - w0) / len(lists) * 1000),
    round((cpu() - c0) / len(lists) * 1000),
)
w0, c0 = time.perf_counter(), cpu()
v = e.embed(names)
print(
    "candidates wall/cpu ms per 30:",
    per_list,
    "names wall/cpu s:",
    round(time.perf_counter() - w0, 2),
    round(cpu() - c0, 2),
)
print(
    hashlib.md5(v.round(5).tobytes()).hexdigest(),
    hashlib.md5(e.embed_tokens(lists[1][:5])[3].tokens.round(5).tobytes()).hexdigest(),
)
