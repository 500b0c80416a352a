"""The ingestion write path as its steps, in the order a run takes them.

Each step is a small module with typed input and output; the runner
(:class:`kg_platform.ingest.runner.IngestRunner`) drives them and owns what a run shares: the run
record, the corpus's lock and the executor that overlaps embedding and writing
(:mod:`kg_platform.ingest.executor`). A step imports only lower layers and earlier steps, never
the runner (``tests/unit/test_layering.py``).

1. ``discover``: files and folders to :class:`~kg_platform.ingest.files.Candidate` s (walk,
   size check, sha256, skip-by-hash).
2. ``parse``: a candidate to a :class:`~kg_platform.ingest.steps.parse.SourceInput`.
3. ``plan``: a source input to a :class:`~kg_platform.ingest.rows.SourcePlan` (segmentation,
   MoG levels, pieces, ids); no I/O.
4. ``embed``: vectors for a batch of plans.
5. ``write``: a batch of plans in one Neo4j transaction (and ``--prune``'s deletes).
6. ``piece_graph``: the corpus's SIMILAR edges between pieces brought up to date.
7. ``references``: REFERENCES edges between sources that name each other's titles.
8. ``distill``: the NLP layer (spaCy entities and relations) over the new chunks.
"""

#: the steps' module names, in the order a run takes them
STEPS = ("discover", "parse", "plan", "embed", "write", "piece_graph", "references", "distill")

__all__ = ["STEPS"]
