"""The NLP step alone on the kept corpus `prof-nlp` (session 27's `ingest-cpu/step_cpu.py`),
with its same-sentence `co_occurs` relations written (`asis`) or dropped (`nocooc`): wall, this
process, the parsing child and Neo4j. Idle, from the repo root: `python step_cpu_relations.py
nocooc`."""

import os
import subprocess
import sys
import time

import kg_platform.distilling.nlp_step as nlp_step
from kg_platform.config import get_settings
from kg_platform.distilling.nlp import COOCCURS
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient

MODE = sys.argv[1] if len(sys.argv) > 1 else "asis"
_write = nlp_step.write_chunk_facts


def _write_without_cooccurrence(graph, resolver, corpus, per_chunk, **kw):
    if MODE == "nocooc":
        per_chunk = [
            (row, mentions, [r for r in rels if r["type"] != COOCCURS])
            for row, mentions, rels in per_chunk
        ]
    return _write(graph, resolver, corpus, per_chunk, **kw)


nlp_step.write_chunk_facts = _write_without_cooccurrence


def neo_cpu():
    pid = subprocess.check_output(["pgrep", "-f", "org.neo4j"]).split()[0].decode()
    f = open(f"/proc/{pid}/stat").read().split(")")[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


s = get_settings()
emb = get_embedder(s.embedding)
emb.embed(["warm"])
with GraphClient.from_settings(s) as g:
    g.write_raw("MATCH (c:Chunk {corpus:'prof-nlp'}) REMOVE c.entities_v")
    g.write_raw("MATCH (e:Entity {corpus:'prof-nlp'}) DETACH DELETE e")
    t0 = os.times()
    n0 = neo_cpu()
    t = time.perf_counter()
    rep = nlp_step.extract_entities_nlp(g, emb, s, corpus="prof-nlp")
    w = time.perf_counter() - t
    t1 = os.times()
    n1 = neo_cpu()
    self_cpu = t1.user + t1.system - t0.user - t0.system
    child_cpu = t1.children_user + t1.children_system - t0.children_user - t0.children_system
    print(
        f"{MODE}: step wall {w:.2f} self cpu {self_cpu:.2f} children {child_cpu:.2f} "
        f"neo4j {n1 - n0:.2f}",
        {k: round(v, 2) for k, v in rep.timings.items()},
    )
