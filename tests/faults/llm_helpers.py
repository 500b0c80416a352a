"""A deterministic scripted LLM for distillation fault tests: any chunk gets answers derived
from its text, so two runs over one corpus ask the same prompts and would write the same facts
twice if nothing stopped them."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from kg_platform.graph.client import GraphClient

_TEXT = re.compile(r"(?:Content|Text):\n(.*?)\n\n", re.S)


def _key(user: str) -> str:
    """The passage a prompt is about (a repair request repeats the first user message)."""
    m = _TEXT.search(user)
    return hashlib.sha256((m.group(1) if m else user).encode()).hexdigest()[:8]


def distill_reply(body: dict[str, Any]) -> str:
    """The reply to one distillation prompt (atomize, entities, tag classes, tags)."""
    system = body["messages"][0]["content"]
    k = passage_key(body)
    if system.startswith("You write the questions"):
        return json.dumps(
            {
                "questions": [
                    f"What does passage {k} say about parsing?",
                    f"Which tool does passage {k} name first?",
                ]
            }
        )
    if system.startswith("You extract a knowledge graph"):
        return json.dumps(
            {
                "entities": [
                    {"name": f"Passage {k}", "type": "concept"},
                    {"name": "Docling", "type": "product"},
                ],
                "relations": [
                    {
                        "source": f"Passage {k}",
                        "target": "Docling",
                        "type": "mentions",
                        "evidence": "Docling",
                    }
                ],
            }
        )
    if system.startswith("You design tag taxonomies"):
        return json.dumps({"classes": [{"name": "topic", "description": "what it is about"}]})
    if system.startswith("You tag passages"):
        return json.dumps({"tags": {"topic": ["documents", f"passage {k}"]}})
    raise AssertionError(f"unexpected system prompt {system!r}")


def passage_key(body: dict[str, Any]) -> str:
    users = [m["content"] for m in body["messages"] if m.get("role") == "user"]
    return _key(users[0] if users else "")


def prompt_kind(body: dict[str, Any]) -> str:
    return body["messages"][0]["content"].split(".")[0]


def distilled_layer(graph: GraphClient, corpus: str) -> dict[str, Any]:
    """Counts of the corpus's distilled layer, and what would betray a duplicate or a half write."""
    row = graph.read_raw(
        "MATCH (c:Chunk:L1 {corpus: $c}) "
        "WITH collect(c) AS chunks "
        "CALL (chunks) { UNWIND chunks AS c "
        "  OPTIONAL MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c) "
        "  WITH c, count(q) AS n "
        "  RETURN sum(CASE WHEN c.atomic_v IS NOT NULL AND n = 0 THEN 1 ELSE 0 END) "
        "           AS marked_without_atoms, "
        "         sum(CASE WHEN c.atomic_v IS NULL AND n > 0 THEN 1 ELSE 0 END) "
        "           AS atoms_without_mark, "
        "         sum(CASE WHEN c.atomic_v IS NOT NULL THEN 1 ELSE 0 END) AS atomic_done, "
        "         sum(CASE WHEN c.entities_v IS NOT NULL THEN 1 ELSE 0 END) AS entities_done, "
        "         sum(CASE WHEN c.tags_v IS NOT NULL THEN 1 ELSE 0 END) AS tags_done, "
        "         size(chunks) AS n_chunks } "
        "CALL (chunks) { UNWIND chunks AS c "
        "  MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c) "
        "  WITH c, q.text AS t, count(*) AS n WHERE n > 1 RETURN count(*) AS dup_questions } "
        "CALL () { MATCH (e:Entity {corpus: $c}) WITH e.key AS k, count(*) AS n WHERE n > 1 "
        "  RETURN count(*) AS dup_entities } "
        "CALL () { MATCH (t:Tag {corpus: $c}) WITH t.class AS cl, t.key AS k, count(*) AS n "
        "  WHERE n > 1 RETURN count(*) AS dup_tags } "
        "CALL (chunks) { UNWIND chunks AS c MATCH (e:Entity)-[m]->(c) "
        "  WITH e, c, type(m) AS r, count(*) AS n WHERE n > 1 RETURN count(*) AS dup_mentions } "
        "CALL (chunks) { UNWIND chunks AS c MATCH (q:AtomicQuestion)-[:ANSWERED_BY]->(c) "
        "  RETURN count(q) AS questions } "
        "CALL () { MATCH (e:Entity {corpus: $c}) RETURN count(e) AS entities } "
        "CALL () { MATCH (t:Tag {corpus: $c}) RETURN count(t) AS tags } "
        "RETURN *",
        c=corpus,
    )[0]
    return {k: int(v or 0) for k, v in dict(row).items() if k != "chunks"}
