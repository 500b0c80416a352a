"""The NLP extractor's parsing child (``distilling.nlp_parser``): it extracts exactly what this
process extracts, it never outlives a parent killed with SIGKILL, and when it cannot do the work
(no pipeline, a crash) the work is done here, with the error a user can act on. Real spaCy
pipeline, real child processes; no Neo4j."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kg_platform.distilling.nlp import DEFAULT_MODEL, load_pipeline, nlp_available
from kg_platform.distilling.nlp_parser import NlpParser, ParseRequest, parse_request
from kg_platform.errors import ConfigError

pytestmark = pytest.mark.skipif(
    not nlp_available(DEFAULT_MODEL), reason="spaCy and its English pipeline are not installed"
)

TEXTS = [
    "Sweetgrass is a documentary film directed by Lucien Castaing-Taylor. "
    "Castaing-Taylor was born in Liverpool.",
    "The sheepherders drive the sheep to Montana, and the sheepherders sleep in tents.",
    "Marie Curie was born in Warsaw and worked in Paris with Pierre Curie.",
]


def _request() -> ParseRequest:
    return ParseRequest(
        texts=TEXTS,
        groups=["s1", "s2", "s2"],
        titles=["Sweetgrass (film)", "Sheep", None],
        min_concept_mentions=2,
        max_mentions=40,
    )


def test_the_child_extracts_what_this_process_extracts():
    req = _request()
    with NlpParser(DEFAULT_MODEL) as parser:
        assert parser.child_pid is not None and parser.child_pid != os.getpid()
        first, second = parser.submit(req), parser.submit(req)  # two in flight, in order
        got = [parser.result(first, req), parser.result(second, req)]
    here = parse_request(load_pipeline(DEFAULT_MODEL), req)
    assert got[0] == here and got[1] == here
    assert any(m.key == "lucien castaing taylor" for m in here[0].mentions)


def test_a_child_without_its_pipeline_hands_the_batch_back_with_the_install_hint():
    req = _request()
    with NlpParser("no_such_spacy_pipeline") as parser:
        future = parser.submit(req)
        with pytest.raises(ConfigError, match="cannot be loaded"):
            parser.result(future, req)  # parsed here after the child said why it could not
        assert parser.child_pid is None  # and no child is started again


def test_a_batch_is_parsed_here_when_the_child_dies_under_it():
    req = _request()
    with NlpParser(DEFAULT_MODEL) as parser:
        pid = parser.child_pid
        assert pid is not None
        os.kill(pid, 9)
        got = parser.result(parser.submit(req), req)
    assert got == parse_request(load_pipeline(DEFAULT_MODEL), req)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in {"Z", "X"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_child_does_not_outlive_a_parent_killed_with_sigkill(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, sys
            from kg_platform.distilling.nlp_parser import NlpParser, ParseRequest
            parser = NlpParser({DEFAULT_MODEL!r}).start()
            # a batch under way when the parent dies
            parser.submit(ParseRequest({TEXTS * 50!r}, ["s"] * 150, [None] * 150, 2, 40))
            print(parser.child_pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    child = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 30  # a liveness bound, not a speed claim: Linux acts at once
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), f"the parsing child {child} outlived its killed parent"
