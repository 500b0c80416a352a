"""For missed gold paragraphs: shared entities with a found gold paragraph, and their degrees."""

import json
import sys
from collections import Counter
from kg_platform.sdk import KnowledgePlatform

ds, corpus, f = sys.argv[1], sys.argv[2], sys.argv[3]
kp = KnowledgePlatform.from_env()
c = Counter()
for line in open(f):
    r = json.loads(line)
    found = [g for g, k in r["pool_rank"].items() if k is not None and k < 6]
    miss = [g for g, k in r["pool_rank"].items() if k is None or k >= 6]
    for m in miss:
        if not found:
            c["no found gold"] += 1
            continue
        rec = kp.graph.driver.execute_query(
            """MATCH (s1:Source {corpus:$c}) WHERE s1.title IN $found
               MATCH (c1:Chunk {source_id: s1.id})<-[:MENTIONED_IN]-(e:Entity)-[:MENTIONED_IN]->(c2:Chunk)
               MATCH (s2:Source {id: c2.source_id, title: $m})
               RETURN DISTINCT e.name AS n, COUNT{(e)-[:MENTIONED_IN]->()} AS d""",
            c=corpus,
            found=found,
            m=m,
        ).records
        degs = sorted(x["d"] for x in rec)
        if not degs:
            kind = "no link"
        elif degs[0] <= 30:
            kind = "bridge<=30"
        else:
            kind = "hub only"
        c[kind] += 1
        print(kind, m, [(x["n"], x["d"]) for x in rec][:4], "| q:", r["q"][:80])
print(c)
