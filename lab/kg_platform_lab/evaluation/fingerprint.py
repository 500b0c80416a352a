"""A corpus's graph as counts and content hashes, to prove a refactor wrote the same graph.

Issues 55 and 57 ask that moving or speeding up the write path leave "the same graph, byte for
byte": the same nodes with the same properties and the same relationships between them. This
module reads every node that carries a corpus's name (and its ``Corpus`` node) and every
relationship leaving one, and reduces each label set and relationship type to a count and a
SHA-256 over its members, sorted so the order Neo4j returns them in does not matter.

A node is named by its ``id`` property where it has one (ids are content-derived), otherwise by
the hash of its labels and properties; a relationship by its two ends' names, its type and its
properties. Element ids never enter a hash.

Left out, because they differ between two runs of the same ingestion by design: ``IngestRun``
nodes and their edges (times, host, process id), :data:`VOLATILE` properties (wall-clock times
and build tokens),
and the corpus's own index label's 24-hex key (``ck<hex>_L1`` is written ``ck*_L1``), which
depends on the corpus's name only. Floats are compared exactly unless ``float_digits`` rounds
them (an embedding computed in a different batch can differ in the last bits).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform_lab.queries import lab_read

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient

#: properties that hold wall-clock times of the run that wrote them, or the id of the piece
#: graph's statistics build (a fresh token per build, so readers never mix two builds)
VOLATILE: frozenset[str] = frozenset(
    {
        "ingested_at",
        "built_at",
        "updated_at",
        "created_at",
        "piece_graph_checked_at",
        "piece_graph_updated",
        "build",
    }
)

_CORPUS_LABEL = re.compile(r"^ck[0-9a-f]{24}_")


@dataclass(frozen=True)
class Fingerprint:
    """Counts and hashes per node label set and per relationship type, plus one overall hash."""

    corpus: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    relationships: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """One hash over every label set's and type's count and hash."""
        body = json.dumps([self.nodes, self.relationships], sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "digest": self.digest,
            "nodes": self.nodes,
            "relationships": self.relationships,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Fingerprint":
        return cls(str(data["corpus"]), dict(data["nodes"]), dict(data["relationships"]))


def _normal(value: Any, float_digits: int | None) -> Any:
    """A property value in a form whose JSON text is the same for equal graphs."""
    if isinstance(value, float):
        return round(value, float_digits) if float_digits is not None else value
    if isinstance(value, (list, tuple)):
        return [_normal(v, float_digits) for v in value]
    if hasattr(value, "iso_format"):  # neo4j.time values
        return value.iso_format()
    return value


def _props(props: dict[str, Any], float_digits: int | None) -> dict[str, Any]:
    return {k: _normal(v, float_digits) for k, v in sorted(props.items()) if k not in VOLATILE}


def _labels(labels: list[str]) -> str:
    return ":".join(sorted(_CORPUS_LABEL.sub("ck*_", label) for label in labels))


def _sha(items: list[str]) -> str:
    digest = hashlib.sha256()
    for item in sorted(items):
        digest.update(item.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def fingerprint(
    graph: "GraphClient", corpus: str, *, float_digits: int | None = None
) -> Fingerprint:
    """Read the corpus ``corpus`` from ``graph`` and reduce it to a :class:`Fingerprint`."""
    names: dict[str, str] = {}
    members: dict[str, list[str]] = defaultdict(list)
    for row in lab_read(graph, "fingerprint/nodes", corpus=corpus):
        labels = _labels(list(row["labels"]))
        props = _props(dict(row["props"]), float_digits)
        text = json.dumps([labels, props], sort_keys=True, default=str)
        name = str(props["id"]) if "id" in props else hashlib.sha256(text.encode()).hexdigest()
        names[row["eid"]] = f"{labels}/{name}"
        members[labels].append(text)
    edges: dict[str, list[str]] = defaultdict(list)
    for row in lab_read(graph, "fingerprint/relationships", corpus=corpus):
        end = names.get(row["end"], "outside")  # an edge into another corpus's node
        props = _props(dict(row["props"]), float_digits)
        edges[row["type"]].append(
            json.dumps([names[row["start"]], end, props], sort_keys=True, default=str)
        )
    return Fingerprint(
        corpus,
        {k: {"count": len(v), "sha256": _sha(v)} for k, v in sorted(members.items())},
        {k: {"count": len(v), "sha256": _sha(v)} for k, v in sorted(edges.items())},
    )


def differences(before: Fingerprint, after: Fingerprint) -> list[str]:
    """One line per label set or relationship type whose count or hash differs (empty: same)."""
    lines: list[str] = []
    for kind, old, new in (
        ("nodes", before.nodes, after.nodes),
        ("relationships", before.relationships, after.relationships),
    ):
        for key in sorted(set(old) | set(new)):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            if a is None or b is None:
                lines.append(f"{kind} {key}: only in {'after' if a is None else 'before'}")
            elif a["count"] != b["count"]:
                lines.append(f"{kind} {key}: count {a['count']} -> {b['count']}")
            else:
                lines.append(f"{kind} {key}: same count {a['count']}, different content")
    return lines
