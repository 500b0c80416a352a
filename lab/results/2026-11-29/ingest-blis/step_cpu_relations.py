"""The NLP step alone on the kept corpus `prof-nlp` (session 27's `ingest-cpu/step_cpu.py`, run
as it is), with its same-sentence `co_occurs` relations written (`asis`) or dropped (`nocooc`):
wall, this process, the parsing child and Neo4j. Idle, from the repo root:
`python lab/results/2026-11-29/ingest-blis/step_cpu_relations.py nocooc`."""

import runpy
import sys
from pathlib import Path

import kg_platform.distilling.nlp_step as nlp_step
from kg_platform.distilling.nlp import COOCCURS

MODE = sys.argv[1] if len(sys.argv) > 1 else "asis"
STEP_CPU = Path(__file__).resolve().parents[2] / "2026-11-28" / "ingest-cpu" / "step_cpu.py"
_write = nlp_step.write_chunk_facts


def _write_without_cooccurrence(graph, resolver, corpus, per_chunk, **kw):
    if MODE == "nocooc":
        per_chunk = [
            (row, mentions, [r for r in rels if r["type"] != COOCCURS])
            for row, mentions, rels in per_chunk
        ]
    return _write(graph, resolver, corpus, per_chunk, **kw)


# extract_entities_nlp looks write_chunk_facts up in its module when it runs
nlp_step.write_chunk_facts = _write_without_cooccurrence
print(MODE, end=": ")
runpy.run_path(str(STEP_CPU), run_name="__main__")
