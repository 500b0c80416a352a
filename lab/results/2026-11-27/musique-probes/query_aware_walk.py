"""Query-aware entity -> chunk transitions: an entity passes its mass to its chunks in proportion
to exp(cos(question, chunk) / tau) instead of equally; the -hub variants also let entities of up
to 100 / 400 chunks pass mass. The walk alone (no selection): share of gold paragraphs in its top
5 / 8 / 12, questions 1-50 / 51-100 (``../entity-walk/walk_alone.py`` scores them).

Run from the repo root:
python lab/results/2026-11-27/musique-probes/query_aware_walk.py DATASET [VARIANT,...]"""

import importlib.util
import sys
from pathlib import Path

import kg_platform

_spec = importlib.util.spec_from_file_location(
    "walk_alone", Path(__file__).parent.parent / "entity-walk" / "walk_alone.py"
)
assert _spec is not None and _spec.loader is not None
walk_alone = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(walk_alone)

SHIPPED = (Path(kg_platform.__file__).parent / "cypher/retrieval/entity_ppr.cypher").read_text()
OLD = """  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, collect(m) AS next
  UNWIND next AS m
  WITH m, sum(s / size(next)) AS s ORDER BY s DESC LIMIT $width"""
assert SHIPPED.count(OLD) == 3
NEW = """  MATCH (n)-[:MENTIONED_IN]-(m)
  WITH n, s, m, CASE WHEN n:Chunk THEN COUNT { (m)-[:MENTIONED_IN]-() } END AS bridges
  WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)
  WITH n, s, m, CASE WHEN n:Entity THEN exp((2 * vector.similarity.cosine(m.embedding, $qv) - 1) / $tau) ELSE 1.0 END AS a
  WITH n, s, collect({m: m, a: a}) AS next
  WITH n, s, next, reduce(t = 0.0, x IN next | t + x.a) AS tot
  UNWIND next AS x
  WITH x.m AS m, sum(s * x.a / tot) AS s ORDER BY s DESC LIMIT $width"""
Q = SHIPPED.replace(OLD, NEW)
HUBS = Q.replace(
    "WHERE deg > 0 AND (NOT n:Entity OR deg <= $max_degree)",
    "WHERE deg > 0 AND (NOT n:Entity OR deg <= $hub_degree)",
).replace(
    "WHERE n:Entity OR (1 < bridges AND bridges <= $max_degree)",
    "WHERE n:Entity OR (1 < bridges AND bridges <= $hub_degree)",
)
variants = {"shipped": (SHIPPED, {})}
for tau in (0.05, 0.1, 0.2):
    variants[f"tau{tau}"] = (Q, {"tau": tau})
for tau in (0.05, 0.1):
    for hd in (100, 400):
        variants[f"tau{tau}-hub{hd}"] = (HUBS, {"tau": tau, "hub_degree": hd})

if __name__ == "__main__":
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
    walk_alone.recall_by_half(
        sys.argv[1], {name: v for name, v in variants.items() if not only or name in only}
    )
