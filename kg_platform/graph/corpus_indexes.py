"""Every corpus's own fulltext and vector indexes, so no corpus's ranking depends on another.

Why: Lucene scores a fulltext hit with statistics of the whole index (how many documents hold a
term, their average length), and a vector (HNSW) index answers an approximate top-k over all its
nodes. With one index per level shared by every corpus, ingesting or dropping corpus B moved the
BM25 scores of corpus A and crowded A's candidates out of the over-fetched top-k, so ``bm25``,
``hybrid``, MoG, MoGG and ``propagate`` ranked A differently. Neo4j 5.26 indexes cannot
pre-filter by property, so each corpus gets its own labels (``ck<hash>_L1``.., ``_Piece``, ...,
added by the writers beside the shared ones) and its own indexes over them
(``cypher/corpus/indexes.cypher.template``): a query naming a corpus asks that corpus's indexes,
whose statistics and neighbours are the corpus's alone.

Each node is in one index set, its corpus's. Graphs made before corpora had their own indexes
also hold shared indexes of the same names without the prefix; ``kgp init`` builds every corpus's
own set, then drops those (:func:`retire_shared_indexes`): keeping both made every write update
two Lucene indexes, the shared one over every corpus, which cost ingestion more Neo4j time than
everything else it writes. A search over every corpus asks each corpus's indexes in turn
(:class:`~kg_platform.retrieval.base.EveryCorpus`, or one row per corpus in MoG's and MoGG's
queries).

The corpus part of every label and index name is :func:`~kg_platform.corpus_name.corpus_key`
(``ck`` + 24 hex digits of a hash of the name), checked against a strict pattern here, the one
place those names are made; nothing a user typed reaches Cypher text.
"""

from __future__ import annotations

import re
import threading
from importlib import resources
from typing import Any

from neo4j.exceptions import Neo4jError

from kg_platform.corpus_name import corpus_key
from kg_platform.errors import GraphError, SchemaError
from kg_platform.graph.client import GraphClient
from kg_platform.graph.cypher import split_statements

__all__ = [
    "INDEX_SUFFIXES",
    "corpus_prefix",
    "drop_corpus_indexes",
    "ensure_corpus_indexes",
    "has_corpus_indexes",
    "index_statements",
    "isolate_existing_corpora",
    "label_corpus_nodes",
    "own_prefix",
    "retire_shared_indexes",
    "UNREAD_SHARED",
]

_PREFIX = re.compile(r"^ck[0-9a-f]{24}_$")
_TEMPLATE = "corpus/indexes.cypher.template"
_NAME = re.compile(r"^CREATE (?:FULLTEXT|VECTOR) INDEX (\S+) IF NOT EXISTS")


def corpus_prefix(corpus: str) -> str:
    """The prefix of ``corpus``'s labels and index names: ``ck<24 hex digits>_``."""
    prefix = corpus_key(corpus) + "_"
    if not _PREFIX.match(prefix):  # corpus_key's contract; checked where names are made
        raise SchemaError(f"corpus key prefix {prefix!r} is not a safe identifier")
    return prefix


def index_statements(prefix: str, dimension: int) -> list[str]:
    """The CREATE statements of one corpus's indexes, rendered for ``prefix`` and ``dimension``."""
    if not _PREFIX.match(prefix):
        raise SchemaError(f"corpus key prefix {prefix!r} is not a safe identifier")
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
        raise SchemaError(f"vector dimension must be a positive integer, got {dimension!r}")
    text = resources.files("kg_platform").joinpath("cypher", _TEMPLATE).read_text("utf-8")
    return split_statements(text.replace("{ix}", prefix).replace("{dimension}", str(dimension)))


def _suffixes() -> tuple[str, ...]:
    names = []
    for statement in index_statements("ck" + "0" * 24 + "_", 1):
        match = _NAME.match(statement)
        if not match:
            raise SchemaError(f"unexpected statement in {_TEMPLATE}: {statement[:60]}")
        names.append(match.group(1).removeprefix("ck" + "0" * 24 + "_"))
    return tuple(names)


#: The names of a corpus's indexes without its prefix (``chunk_text_l1``, ..., ``entity_embedding``):
#: graphs from before one index set per node also have shared indexes of these names.
INDEX_SUFFIXES: tuple[str, ...] = _suffixes()


#: Indexes over every corpus that graphs before one index set per node had and no query reads
#: (sources' embeddings, atomic questions' and entities' text): each write paid for them.
UNREAD_SHARED: tuple[str, ...] = ("source_embedding", "atomic_question_text", "entity_name")


def _online(graph: GraphClient, prefix: str) -> set[str]:
    rows = graph.read_raw(
        "SHOW INDEXES YIELD name, state WHERE name STARTS WITH $prefix AND state = 'ONLINE' "
        "RETURN name",
        prefix=prefix,
    )
    return {r["name"] for r in rows}


def _labelled(graph: GraphClient, corpus: str, prefix: str) -> bool:
    """Whether every chunk of ``corpus`` carries its own level label (one pass over its chunks,
    the cost of the corpus-share count searches made before corpora had their own indexes)."""
    row = graph.read("corpus/own_label_coverage", corpus=corpus, ix=prefix)[0]
    return bool(row["chunks"] == row["labelled"])


def has_corpus_indexes(graph: GraphClient, corpus: str) -> bool:
    """Whether ``corpus``'s own indexes answer for it: every one exists and is online, and every
    chunk of the corpus carries its own label (else queries use the shared indexes).

    All of them exist only after the corpus's nodes were labelled (:func:`ensure_corpus_indexes`
    labels first, creates second), and the writers label every node they create; the label
    check catches nodes written otherwise (by hand, or by an older version afterwards)."""
    prefix = corpus_prefix(corpus)
    if not _online(graph, prefix) >= {prefix + s for s in INDEX_SUFFIXES}:
        return False
    return _labelled(graph, corpus, prefix)


def own_prefix(graph: GraphClient, corpus: str | None) -> str:
    """The prefix a query puts before an index name to search ``corpus``: its own indexes'
    when it has them all. Known complete corpora cost nothing (a writer of this process made or
    saw them). Otherwise ``""``, the shared indexes, which only a graph not yet through `kgp
    init` still has (:func:`retire_shared_indexes`); without them, a :class:`SchemaError` that
    says to run it."""
    if not corpus:
        return _shared_prefix(
            graph, "no corpus was named (each corpus is searched in its own indexes), and"
        )
    if _complete(graph, corpus):
        return corpus_prefix(corpus)
    return _shared_prefix(graph, f"corpus {corpus!r} has no search indexes of its own yet, and")


def _complete(graph: GraphClient, corpus: str) -> bool:
    """:func:`has_corpus_indexes`, free for corpora this process already made or saw complete
    (remembered in ``_ready``)."""
    key = (graph.uri, graph.database, corpus_prefix(corpus))
    if key in _ready:
        return True
    if not has_corpus_indexes(graph, corpus):
        return False
    with _lock:
        _ready.add(key)
    return True


def _shared_present(graph: GraphClient) -> bool:
    rows = graph.read_raw(
        "SHOW INDEXES YIELD name WHERE name IN $names RETURN count(*) AS n",
        names=list(INDEX_SUFFIXES),
    )
    return bool(rows and rows[0]["n"] == len(INDEX_SUFFIXES))


def _shared_prefix(graph: GraphClient, what: str) -> str:
    if _shared_present(graph):
        return ""
    raise SchemaError(
        f"{what} the graph holds no shared search indexes",
        hint="run `kgp init`: it gives every corpus its own indexes",
    )


def _dimension(graph: GraphClient) -> int:
    rows = graph.read_raw(
        "MATCH (s:SchemaInfo {id: 'schema'}) RETURN s.embedding_dimension AS dimension"
    )
    if not rows or rows[0]["dimension"] is None:
        raise SchemaError(
            "the graph has no schema yet (no embedding dimension recorded)",
            hint="run `kgp init` first",
        )
    return int(rows[0]["dimension"])


def _run_implicit(graph: GraphClient, query: str, **params: Any) -> None:
    """Run a ``CALL {} IN TRANSACTIONS`` statement (it needs an implicit transaction)."""
    try:
        with graph.driver.session(database=graph.database) as session:
            session.run(query, **params).consume()
    except Neo4jError as exc:
        raise GraphError(f"Neo4j error {exc.code}: {exc.message}") from exc


def label_corpus_nodes(graph: GraphClient, corpus: str, prefix: str) -> None:
    """Give ``corpus``'s nodes the labels its own indexes cover (written by hand, or by a
    version before corpora had indexes); idempotent."""
    text = resources.files("kg_platform").joinpath("cypher", "corpus", "label_nodes.cypher")
    for statement in split_statements(text.read_text("utf-8")):
        _run_implicit(graph, statement, corpus=corpus, ix=prefix)


#: (database uri, name, prefix) of the corpora this process saw complete: a write then skips
#: the check; :func:`drop_corpus_indexes` forgets the corpus
_ready: set[tuple[str, str, str]] = set()
_lock = threading.Lock()


def ensure_corpus_indexes(graph: GraphClient, corpus: str, *, backfill: bool = True) -> bool:
    """Make sure ``corpus`` has every index of its own; return True when some were created.

    Run before a corpus is written (ingestion, distillation) and by ``kgp init`` for every
    corpus. When an index is missing (a new corpus, or one written before corpora had indexes):
    label the corpus's existing nodes (``backfill``: one pass over them, batched), create the
    missing indexes (``IF NOT EXISTS``: a second process doing the same is harmless) and wait
    until they are online, so the write that follows is searchable in them at once.
    """
    from kg_platform.graph.schema import apply_statements

    prefix = corpus_prefix(corpus)
    key = (graph.uri, graph.database, prefix)
    if key in _ready:
        return False
    wanted = {prefix + s for s in INDEX_SUFFIXES}
    if _online(graph, prefix) >= wanted:
        if backfill and not _labelled(graph, corpus, prefix):
            label_corpus_nodes(graph, corpus, prefix)
        with _lock:
            _ready.add(key)
        return False
    if backfill:
        label_corpus_nodes(graph, corpus, prefix)
    apply_statements(graph, index_statements(prefix, _dimension(graph)))
    graph.write_raw("CALL db.awaitIndexes(300)")
    with _lock:
        _ready.add(key)
    return True


def drop_corpus_indexes(graph: GraphClient, corpus: str) -> list[str]:
    """Drop ``corpus``'s own indexes (when the corpus is dropped); return the names dropped."""
    prefix = corpus_prefix(corpus)
    with _lock:
        _ready.discard((graph.uri, graph.database, prefix))
    rows = graph.read_raw(
        "SHOW INDEXES YIELD name WHERE name STARTS WITH $prefix RETURN name", prefix=prefix
    )
    names = sorted(r["name"] for r in rows if r["name"].removeprefix(prefix) in INDEX_SUFFIXES)
    for name in names:
        # a name of the form prefix + a suffix of our template: checked above, never user text
        graph.write_raw(f"DROP INDEX {name} IF EXISTS")
    return names


def _corpus_names(graph: GraphClient) -> list[str]:
    """Every corpus the graph names (a ``Corpus`` node, or a source's ``corpus``), sorted."""
    return [r["name"] for r in graph.read("corpus/names") if r["name"]]


def retire_shared_indexes(graph: GraphClient) -> list[str]:
    """Drop the shared twins of the corpus indexes (``chunk_text_l1``, ..., the names of
    :data:`INDEX_SUFFIXES` without a prefix) once every corpus has its own set; return the names
    dropped. Nothing of those is dropped while a corpus still lacks its own set: the shared
    ones are then what searches it. The indexes no query reads (:data:`UNREAD_SHARED`) go
    in any case.

    Why: with both, every chunk, piece, section, question, entity and tag was written into two
    Lucene indexes, one of them spanning every corpus, so each write's index work grew with the
    whole graph rather than with its corpus."""
    retired = list(UNREAD_SHARED)
    if all(_complete(graph, name) for name in _corpus_names(graph)):
        retired += INDEX_SUFFIXES
    present = graph.read_raw(
        "SHOW INDEXES YIELD name WHERE name IN $names RETURN name", names=retired
    )
    names = sorted(r["name"] for r in present)
    for name in names:
        # one of our own fixed names (INDEX_SUFFIXES, from the template), never user text
        graph.write_raw(f"DROP INDEX {name} IF EXISTS")
    return names


def isolate_existing_corpora(graph: GraphClient) -> list[str]:
    """Give every corpus in the graph its own indexes (``kgp init``); return those backfilled.

    Costs one pass over each such corpus's nodes (adding a label) and building its indexes
    (about what ingesting it filled in the shared ones); corpora that have them cost one
    ``SHOW INDEXES``."""
    with _lock:
        _ready.clear()  # look again: `kgp init --drop-vector-indexes` dropped some
    done = []
    for name in _corpus_names(graph):
        if ensure_corpus_indexes(graph, name):
            done.append(name)
    return done
