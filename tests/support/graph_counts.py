"""The shape of a corpus' graph, independent of its ids: what two ingestions of the same
documents must agree on whatever the corpus name, folder, file order or engine."""

from __future__ import annotations

from typing import Any


def corpus_counts(graph: Any, corpus: str) -> dict[str, int]:
    """Nodes per label and relationships per type among the corpus' nodes (the corpus's own
    labels, ``ck<hash of its name>_L1`` etc., counted as ``own_L1``: their prefix follows the name)."""
    from kg_platform.graph.corpus_indexes import corpus_prefix

    own = corpus_prefix(corpus)
    labels = graph.read_raw(
        "MATCH (n {corpus: $c}) WHERE NOT n:IngestRun AND NOT n:JobLock "
        "UNWIND labels(n) AS label RETURN label, count(*) AS n",
        c=corpus,
    )
    rels = graph.read_raw(
        "MATCH (a {corpus: $c})-[r]->(b) WHERE NOT a:IngestRun AND NOT b:IngestRun "
        "RETURN type(r) AS type, count(*) AS n",
        c=corpus,
    )
    out = {f"node:{r['label'].replace(own, 'own_', 1)}": r["n"] for r in labels}
    out.update({f"rel:{r['type']}": r["n"] for r in rels})
    return out


def similar_by_text(graph: Any, corpus: str) -> set[tuple[str, str]]:
    """The SIMILAR edges named by their pieces' texts (ids depend on the corpus name)."""
    rows = graph.read_raw(
        "MATCH (a:Piece {corpus: $c})-[:SIMILAR]-(b:Piece) WHERE a.text <= b.text "
        "RETURN a.text AS a, b.text AS b",
        c=corpus,
    )
    return {(r["a"], r["b"]) for r in rows}
