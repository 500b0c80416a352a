"""``ask`` end to end against the real Neo4j and the scripted OpenAI-compatible server:
Algorithm 1 with each early stop over the real atomic-question index, numbered citations, the
stored ``(:Trajectory)``, SAGE self-feedback rounds, task classification, malformed replies, and
the no-LLM evidence answer (SDK and CLI)."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from kg_platform.errors import ConfigError
from kg_platform.reasoning import NO_LLM_MARK, Reasoner
from kg_platform.reasoning.trajectory import load_trajectory
from support.fake_openai import FakeOpenAI, fake_llm, llm_settings_for  # noqa: F401
from tests.support.fixtures import index_corpus

pytestmark = pytest.mark.integration

CORPUS = "reason-test"
DOCS = [
    (
        "Sweetgrass (film)",
        "Sweetgrass is a 2009 documentary film about sheepherders in Montana, "
        "directed by Lucien Castaing-Taylor and Ilisa Barbash.",
        ["Who directed the documentary film Sweetgrass?", "What is Sweetgrass about?"],
    ),
    (
        "Lucien Castaing-Taylor",
        "Lucien Castaing-Taylor was born on 10 January 1966 in Liverpool, "
        "United Kingdom. He is an anthropologist and artist.",
        ["Where was Lucien Castaing-Taylor born?", "When was Lucien Castaing-Taylor born?"],
    ),
    (
        "Liverpool",
        "Liverpool is a port city in North West England on the River Mersey.",
        ["In which region of England is Liverpool?"],
    ),
    (
        "Ilisa Barbash",
        "Ilisa Barbash is an American filmmaker and museum curator at Harvard.",
        ["What is Ilisa Barbash's profession?"],
    ),
]
QUESTION = "Where was the director of the film Sweetgrass born?"

BUILD = """
UNWIND $docs AS d
MERGE (co:Corpus {name: $corpus})
CREATE (s:Source {id: d.sid, corpus: $corpus, uri: 'test://' + d.title, title: d.title})
CREATE (co)-[:HAS_SOURCE]->(s)
CREATE (sec:Section {id: d.sec, corpus: $corpus, source_id: d.sid, title: d.title, level: 0,
                     ord: 0, path: d.title})
CREATE (s)-[:HAS_SECTION]->(sec)
CREATE (c1:Chunk:L1 {id: d.c1, corpus: $corpus, source_id: d.sid, section_id: d.sec, level: 1,
                     ord: 0, text: d.text, tokens: 30, kind: 'text', page_start: 1, page_end: 1})
CREATE (c2:Chunk:L2 {id: d.c2, corpus: $corpus, source_id: d.sid, section_id: d.sec, level: 2,
                     ord: 0, text: d.text, tokens: 30, kind: 'text', page_start: 1, page_end: 1})
CREATE (sec)-[:HAS_CHUNK]->(c1), (sec)-[:HAS_CHUNK]->(c2), (c1)-[:PART_OF]->(c2)
WITH c1, c2, d
CALL db.create.setNodeVectorProperty(c1, 'embedding', d.vec)
CALL db.create.setNodeVectorProperty(c2, 'embedding', d.vec)
WITH c1, d
UNWIND d.atoms AS a
CREATE (q:AtomicQuestion {id: a.id, corpus: $corpus, source_id: d.sid, text: a.text})
CREATE (q)-[:ANSWERED_BY]->(c1)
WITH q, a
CALL db.create.setNodeVectorProperty(q, 'embedding', a.vec)
"""


@pytest.fixture()
def kb(clean_graph, embedder):
    docs = []
    for i, (title, text, atoms) in enumerate(DOCS):
        vecs = embedder.embed([text, *atoms])
        docs.append(
            {
                "sid": f"s{i}",
                "sec": f"sec{i}",
                "c1": f"c1-{i}",
                "c2": f"c2-{i}",
                "title": title,
                "text": text,
                "vec": vecs[0].tolist(),
                "atoms": [
                    {"id": f"a{i}-{j}", "text": t, "vec": vecs[j + 1].tolist()}
                    for j, t in enumerate(atoms)
                ],
            }
        )
    clean_graph.write_raw(BUILD, docs=docs, corpus=CORPUS)
    index_corpus(clean_graph, CORPUS)  # hand-written nodes: the corpus's own labels and indexes
    return clean_graph


class Script:
    """Routes each request to its prompt by the system message; replies are consumed in order."""

    KINDS = {
        "You decompose questions": "propose",
        "You choose the next piece": "select",
        "You choose the next passage": "backup_select",
        "You answer questions": "answer",
        "You grade answers": "self_feedback",
        "You classify questions": "classify",
    }

    def __init__(self, **replies: list[str]) -> None:
        self.replies = {k: list(v) for k, v in replies.items()}
        self.seen: dict[str, list[str]] = defaultdict(list)
        self.order: list[str] = []

    def kind(self, body: dict) -> str:
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        for prefix, kind in self.KINDS.items():
            if system.startswith(prefix):
                return kind
        return "other"

    def __call__(self, body: dict) -> str:
        kind = self.kind(body)
        user = [m["content"] for m in body["messages"] if m["role"] == "user"]
        repair = len(user) > 1
        self.order.append(kind + ("#repair" if repair else ""))
        self.seen[kind].append(user[0])
        queue = self.replies.get(kind + ("#repair" if repair else ""), self.replies.get(kind))
        if not queue:
            raise AssertionError(f"unscripted {kind} call")
        return queue.pop(0)


def reasoner(kb, embedder, fake, tmp_path, script: Script, **tuning) -> Reasoner:
    """``tuning``: kg_platform.tuning sections, e.g. ``decomposition={"delta": 0.99}``."""
    from kg_platform.llm import get_llm

    fake.responder = script
    base = llm_settings_for(fake, tmp_path, cache=False)
    settings = base.model_copy(update={"corpus": CORPUS}).with_tuning(**tuning)
    return Reasoner(graph=kb, embedder=embedder, settings=settings, llm=get_llm(settings))


def j(**kw) -> str:
    return json.dumps(kw)


def test_decomposition_follows_algorithm_1_and_cites_the_chosen_chunks(
    kb, embedder, fake_llm, tmp_path
):
    script = Script(
        propose=[
            j(thinking="need the director", sub_questions=["Who directed Sweetgrass?"]),
            j(thinking="need birthplace", sub_questions=["Where was Lucien Castaing-Taylor born?"]),
            j(thinking="enough", sub_questions=[]),
        ],
        select=[j(thinking="", question_idx=1), j(thinking="", question_idx=1)],
        answer=[j(rationale="[1] names the director, [2] his birthplace.", answer="Liverpool")],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script)
    ans = r.ask(QUESTION, mode="decompose")

    assert script.order == ["propose", "select", "propose", "select", "propose", "answer"]
    assert ans.answer == "Liverpool" and ans.mode == "decompose"
    assert [c.source_title for c in ans.citations] == [
        "Sweetgrass (film)",
        "Lucien Castaing-Taylor",
    ]
    assert [c.n for c in ans.citations] == [1, 2] and all(c.cited for c in ans.citations)
    assert ans.citations[0].chunk_id == "c1-0" and ans.citations[0].page == 1
    assert ans.citations[0].source_uri == "test://Sweetgrass (film)"
    # the atomic-question index found the candidates: the real atomic question is shown
    assert "Who directed the documentary film Sweetgrass?" in script.seen["select"][0]
    # round 2: the chunk already in context is dropped from the candidates
    assert "Who directed the documentary film Sweetgrass?" not in script.seen["select"][1]
    assert "Sweetgrass is a 2009 documentary" in script.seen["propose"][1]  # context shown
    assert "Title: Sweetgrass (film)" in script.seen["answer"][0]
    # tokens: the sum of what the server reported
    assert ans.usage.calls == 6 and ans.usage.prompt_tokens > 0
    decompose = next(e for e in ans.trace if e.step == "decompose")
    assert decompose.detail["stop"] == "context_sufficient"

    stored = load_trajectory(kb, ans.trajectory_id)
    assert stored["question"] == QUESTION and stored["corpus"] == CORPUS
    assert stored["chunk_ids"] == ["c1-0", "c1-1"]
    assert [s["stop"] for s in stored["steps"]] == [None, None, "context_sufficient"]
    assert stored["steps"][0]["candidates"][0]["cos"] >= 0.5
    assert stored["answer"] == "Liverpool" and stored["tokens"] == ans.usage.total_tokens


def test_no_candidate_above_delta_stops_and_answers_from_direct_retrieval(
    kb, embedder, fake_llm, tmp_path
):
    script = Script(
        propose=[j(thinking="", sub_questions=["Quantum chromodynamics lattice?"])],
        answer=[j(rationale="[1]", answer="Liverpool")],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script, decomposition={"delta": 0.99})
    ans = r.ask(QUESTION, mode="decompose")
    assert script.order == ["propose", "answer"]
    assert next(e for e in ans.trace if e.step == "decompose").detail["stop"] == "no_candidates"
    assert any("decomposition chose no chunk (no_candidates)" in n for n in ans.notes)
    assert ans.citations and ans.citations[0].source_title


def test_no_selection_stop_after_malformed_selection_and_backup(kb, embedder, fake_llm, tmp_path):
    script = Script(
        propose=[j(thinking="", sub_questions=["Who directed Sweetgrass?"])],
        select=["I think number one", "still not json"],  # invalid, repair invalid
        backup_select=[j(thinking="none helps", paragraph_idx=None)],
        answer=[j(rationale="", answer="unknown")],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script)
    ans = r.ask(QUESTION, mode="decompose")
    assert script.order == ["propose", "select", "select#repair", "backup_select", "answer"]
    stop = next(e for e in ans.trace if e.step == "decompose").detail["stop"]
    assert stop == "no_selection"
    assert r.llm.usage.invalid_outputs == 1  # recorded, not crashed


def test_unusable_llm_answer_is_replaced_by_marked_evidence(kb, embedder, fake_llm, tmp_path):
    from kg_platform.reasoning.pipeline import UNUSABLE_MARK

    script = Script(answer=["[1] Title: Sweetgrass ... no json", "still [2] no json"])
    r = reasoner(kb, embedder, fake_llm, tmp_path, script)
    ans = r.ask(QUESTION, mode="factual")
    assert ans.answer.startswith(UNUSABLE_MARK) and "Liverpool" in ans.answer
    assert r.llm.usage.invalid_outputs == 1
    # citations point at the quoted evidence, never at numbers echoed in the invalid reply
    cited = [c for c in ans.citations if c.cited]
    assert cited and all(c.source_title for c in cited)


def test_factual_mode_with_self_feedback_rounds(kb, embedder, fake_llm, tmp_path):
    script = Script(
        answer=[j(rationale="[2]", answer="Montana"), j(rationale="[1]", answer="Liverpool")],
        self_feedback=[
            "Evaluation Score: 4\nContext Adjustment: -1",
            "Evaluation Score: 9\nContext Adjustment: 1",
        ],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script, sage={"min_k": 4, "n_candidates": 4})
    ans = r.ask(QUESTION, mode="factual", feedback=True)
    assert script.order == ["answer", "self_feedback", "answer", "self_feedback"]
    passages = [len(re.findall(r"^\[\d+\] ", p, re.M)) for p in script.seen["answer"]]
    assert passages == [4, 3]  # min_k 4 -> 3 (forced)
    assert ans.answer == "Liverpool" and ans.feedback_rounds == 2 and ans.feedback_score == 9
    assert len(ans.citations) == 3 and [c.cited for c in ans.citations] == [True, False, False]
    fb = next(e for e in ans.trace if e.step == "self_feedback").detail
    assert fb["accepted"] and [x["score"] for x in fb["rounds"]] == [4, 9]
    assert ans.trajectory_id is None  # factual runs store none


def test_a_token_budget_gives_the_llm_the_default_paths_chunks_within_it(
    kb, embedder, fake_llm, tmp_path
):
    """``context_tokens``: the LLM reads what ``kgp retrieve --budget-tokens N`` returns, in its
    order, the last chunk truncated to fit; self-feedback then moves by whole chunks."""
    from kg_platform.retrieval.pipeline import retrieve
    from kg_platform.tokens import count_tokens

    script = Script(
        answer=[j(rationale="[1]", answer="Liverpool"), j(rationale="[1]", answer="Liverpool")],
        self_feedback=[
            "Evaluation Score: 4\nContext Adjustment: -1",
            "Evaluation Score: 9\nContext Adjustment: 1",
        ],
    )
    # SAGE's settings would keep all four chunks whole: the budget, not SAGE, must decide
    r = reasoner(kb, embedder, fake_llm, tmp_path, script, sage={"min_k": 4, "n_candidates": 4})
    budget = 45
    ans = r.ask(QUESTION, mode="factual", feedback=True, context_tokens=budget)

    expected = retrieve(
        r._context(CORPUS),
        QUESTION,
        strategy=r.settings.retrieve.strategy,
        k=4,
        select=r.settings.retrieve.select,
        max_tokens=budget,
    ).items
    assert len(expected) == 2 and sum(count_tokens(it.text) for it in expected) == budget
    first_prompt = script.seen["answer"][0]
    assert len(re.findall(r"^\[\d+\] ", first_prompt, re.M)) == 2
    assert expected[1].text.strip() in first_prompt  # the crossing chunk, truncated to fit
    assert "1966" not in first_prompt  # its rest is not read
    retrieved = next(e for e in ans.trace if e.step == "retrieve").detail
    assert retrieved["context_tokens"] == budget and "g" not in retrieved
    assert retrieved["selected"] == 2
    # feedback asked for one chunk fewer: the second answer read the first chunk alone
    assert len(re.findall(r"^\[\d+\] ", script.seen["answer"][1], re.M)) == 1
    assert [c.chunk_id for c in ans.citations] == [expected[0].id]

    with pytest.raises(ConfigError, match="context_tokens must be at least 1"):
        r.ask(QUESTION, mode="factual", context_tokens=0)


def test_a_token_budget_cuts_the_decompositions_chunks_too(kb, embedder, fake_llm, tmp_path):
    """``context_tokens`` is a cap whichever mode answers: the chunks Algorithm 1 chose are cut
    to it in their order, the last one truncated."""
    from kg_platform.tokens import count_tokens

    script = Script(
        propose=[
            j(thinking="need the director", sub_questions=["Who directed Sweetgrass?"]),
            j(thinking="need birthplace", sub_questions=["Where was Lucien Castaing-Taylor born?"]),
            j(thinking="enough", sub_questions=[]),
        ],
        select=[j(thinking="", question_idx=1), j(thinking="", question_idx=1)],
        answer=[j(rationale="[1], [2]", answer="Liverpool")],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script)
    first = DOCS[0][1]
    budget = count_tokens(first) + 8
    ans = r.ask(QUESTION, mode="decompose", context_tokens=budget)

    prompt = script.seen["answer"][0]
    assert len(re.findall(r"^\[\d+\] ", prompt, re.M)) == 2
    assert first in prompt and "Content: Lucien Castaing-Taylor" in prompt
    assert "1966" not in prompt  # the second chunk stops after its first 8 word pieces
    assert [c.chunk_id for c in ans.citations] == ["c1-0", "c1-1"]


def test_auto_mode_routes_by_task_class(kb, embedder, fake_llm, tmp_path):
    script = Script(
        classify=[j(task_class="factual"), j(task_class="predictive")],
        answer=[j(rationale="", answer="a"), j(rationale="", answer="b")],
        propose=[j(thinking="", sub_questions=[])],
    )
    r = reasoner(kb, embedder, fake_llm, tmp_path, script)
    first = r.ask("Who directed Sweetgrass?")
    assert first.task_class == "factual" and first.mode == "factual"
    second = r.ask("How many documentaries will Barbash make next decade?")
    assert second.task_class == "predictive" and second.mode == "decompose"
    assert any("not specialised yet" in n for n in second.notes)


def test_without_llm_ask_returns_marked_evidence_sentences(kb, embedder, tmp_path):
    from kg_platform.config import Settings

    settings = Settings(corpus=CORPUS, cache_dir=tmp_path)
    ans = Reasoner(graph=kb, embedder=embedder, settings=settings).ask(QUESTION, feedback=True)
    assert ans.answer.startswith(NO_LLM_MARK) and not ans.llm and ans.mode == "no-llm"
    assert "Liverpool" in ans.answer  # the evidence is there
    assert ans.skipped == [
        "task classification",
        "knowledge-aware decomposition",
        "answer generation",
        "self-feedback",
    ]
    assert ans.citations and all(c.quote for c in ans.citations)
    assert ans.usage.calls == 0
    assert "no LLM configured" in ans.render()


def test_cli_ask_without_llm(kb, settings, monkeypatch):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app
    from kg_platform.config import get_settings

    for key in ("KGP_LLM__BASE_URL", "KGP_LLM__MODEL", "KGP_LLM__API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NEO4J_URI", settings.neo4j.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j.password.get_secret_value())
    get_settings.cache_clear()
    try:
        out = CliRunner().invoke(app, ["ask", QUESTION, "--corpus", CORPUS, "--json"])
    finally:
        get_settings.cache_clear()
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["llm"] is False and data["answer"].startswith(NO_LLM_MARK)
    assert data["citations"][0]["source_title"]
