"""One `kgp retrieve` as its own process, the way a user runs it: it imports neither torch nor
spaCy (nor the libraries that would bring them, nor the reasoner), and prints, byte for byte, what the same
command prints inside a process that has imported everything and loaded every model already
(the lazy imports and the memory-mapped model change the cost of an answer, never the answer).

Against the session's real Neo4j, over the samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

CORPUS = "process-samples"
SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"
HEAVY = ("torch", "spacy", "thinc", "transformers", "sentence_transformers", "scipy", "pandas")
#: and of the product, what only other paths need: the reasoner (``ask``, or ``--record``)
NOT_ON_THE_PATH = (*HEAVY, "kg_platform.reasoning", "kg_platform.ingest.pipeline")
COMMANDS = [
    ["What file formats can MarkItDown convert?"],
    ["What file formats can MarkItDown convert?", "-s", "mog", "--explain"],
    ["Where is IBM headquartered?", "-s", "mogg", "--k", "8", "--json"],
    ["Who founded IBM?", "-s", "entity", "--select", "sage"],
    ["What is AutoGen?", "--budget-tokens", "512"],
    ["What is AutoGen?", "-s", "hybrid", "--select", "none", "--scope", "MarkItDown"],
]

#: ``kgp``'s entry point as the console script runs it (without the working directory first on
#: ``sys.path``), reporting which of the watched packages it had imported when it exited
CHILD = """
import atexit, json, sys
sys.path.pop(0)
watched = json.loads(sys.argv[1])
def report():
    loaded = set(sys.modules) | {m.split(".")[0] for m in sys.modules}
    sys.stderr.write("HEAVY=" + json.dumps([m for m in watched if m in loaded]) + "\\n")
atexit.register(report)
sys.argv = ["kgp", *sys.argv[2:]]
from kg_platform.cli.main import main
main()
"""


@pytest.fixture(scope="module")
def corpus(graph_session, settings, embedder) -> str:
    from kg_platform.sdk import KnowledgePlatform

    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = kp.ingest([SAMPLES], corpus=CORPUS)
    assert report.status == "completed", report.summary()
    return CORPUS


def _child_env(settings) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        NEO4J_URI=settings.neo4j.uri,
        NEO4J_PASSWORD=settings.neo4j.password.get_secret_value(),
        KGP_DATA_DIR=str(settings.data_dir),
        KGP_DISTILL__NLP_ON_INGEST="false",
    )
    return env


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[1:]) or "default")
def test_a_retrieve_process_imports_no_torch_or_spacy_and_prints_the_warm_answer(
    args: list[str], corpus: str, settings, cli_env, tmp_path
) -> None:
    from kg_platform.cli.main import app

    argv = ["retrieve", *args, "--corpus", corpus]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(NOT_ON_THE_PATH), *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=_child_env(settings),
        cwd=tmp_path,  # nothing of the checkout on sys.path but what the install puts there
    )
    assert child.returncode == 0, child.stderr[-3000:]
    line = [x for x in child.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line and json.loads(line[-1][len("HEAVY=") :]) == [], f"`kgp {argv}` imported them"
    warm = CliRunner().invoke(app, argv)  # this process: every model loaded, everything imported
    assert warm.exit_code == 0, warm.output
    assert child.stdout == warm.stdout
    assert child.stdout.strip(), "an answer was printed"


def test_a_second_process_reads_the_candidates_states_from_disk_and_prints_the_same(
    corpus: str, settings, cli_env, tmp_path
) -> None:
    """``rerank.state_cache_mb``: the first process stores its candidates' word-piece states
    (a cache folder of its own here, the ONNX files linked in), the next reads them from disk;
    both print what a process that computed every state prints."""
    from kg_platform.cli.main import app
    from kg_platform.config import default_cache_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "onnx").symlink_to(default_cache_dir() / "onnx", target_is_directory=True)
    env = {**_child_env(settings), "KGP_CACHE_DIR": str(cache)}
    argv = ["retrieve", "What file formats can MarkItDown convert?", "--corpus", corpus, "--json"]
    outs = []
    for _ in range(2):
        child = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(HEAVY), *argv],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=tmp_path,
        )
        assert child.returncode == 0, child.stderr[-3000:]
        assert (cache / "rerank-states.sqlite").exists()
        outs.append(child.stdout)
    warm = CliRunner().invoke(app, argv)
    assert warm.exit_code == 0, warm.output
    assert outs[0] == outs[1] == warm.stdout and json.loads(outs[0])["items"]
