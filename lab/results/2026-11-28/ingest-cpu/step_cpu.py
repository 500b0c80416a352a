"""CPU of the NLP step alone on the kept corpus `prof-nlp` (see parse_ops.py): wall, this
process, the parsing child and Neo4j, with the step's own timings. Idle, run from the repo root."""

import os
import subprocess
import time

from kg_platform.config import get_settings
from kg_platform.embedding import get_embedder
from kg_platform.graph.client import GraphClient
from kg_platform.distilling.nlp_step import extract_entities_nlp


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
    rep = extract_entities_nlp(g, emb, s, corpus="prof-nlp")
    w = time.perf_counter() - t
    t1 = os.times()
    n1 = neo_cpu()
    print(
        f"step wall {w:.2f} self cpu {t1.user + t1.system - t0.user - t0.system:.2f} children {t1.children_user + t1.children_system - t0.children_user - t0.children_system:.2f} neo4j {n1 - n0:.2f}",
        {k: round(v, 2) for k, v in rep.timings.items()},
    )
