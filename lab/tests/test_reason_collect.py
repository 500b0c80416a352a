"""PIKE-RAG Algorithm 2 (UCB context sampling, near-miss credit, spec §5.8) and the Algorithm 3
SFT export formats (spec §5.9)."""

from __future__ import annotations

import json
import math

from kg_platform.llm.prompts import parse_decompose
from kg_platform_lab.decomposer.collect import (
    Collector,
    QAItem,
    UCBState,
    collect_one,
    collect_to_jsonl,
    read_questions,
    sft_examples,
)
from kg_platform_lab.decomposer.scoring import exact_match, token_f1
from kg_platform.reasoning.steps import Proposal, Selection

from tests.unit.test_reason_decompose import MemorySource, ScriptedSteps, atom


def test_ucb_skips_sampling_without_credit_and_picks_the_argmax():
    state = UCBState(alpha=1.0)
    assert state.sample(1, set()) is None
    state.credit("a", 0.4)
    state.credit("b", 0.3)
    state.credit("b", 0.3)  # two near misses: S(b) = 0.6
    assert state.sample(1, set()) == "b"  # t = 1: ln 1 = 0, pure exploitation
    assert state.V["b"] == 2  # [choice] the sample counts as a visit
    # t = 3: S(a) + sqrt(ln3 / 1) = 0.4 + 1.048 > S(b) + sqrt(ln3 / 2) = 0.6 + 0.741
    assert state.sample(3, set()) == "a"
    assert state.sample(3, {"a", "b"}) is None  # chunks in context are never sampled
    state.chose("b")
    assert state.S["b"] == 0.0 and state.V["b"] == 3
    assert math.isclose(0.4 + math.sqrt(math.log(3) / 1), 1.4481, abs_tol=1e-3)


def test_near_misses_earn_credit_and_the_sample_is_shown_to_the_proposer_only():
    source = MemorySource(
        atoms={
            "p1": [atom("c1", "good", 0.8), atom("c2", "near", 0.4)],
            "p2": [atom("c3", "good2", 0.9)],
        }
    )
    steps = ScriptedSteps(
        proposals=[Proposal(["p1"]), Proposal(["p2"]), Proposal([], True)],
        selections=[Selection(0), Selection(0)],
    )
    state = UCBState()
    run = collect_one(
        steps, source, "q", state, max_rounds=5, delta=0.5, delta_explore=0.35, k_explore=8
    )
    assert [c.chunk_id for c in run.chosen] == ["c1", "c3"]
    assert run.rounds[0].near_misses == {"c2": 0.4}
    assert run.rounds[0].candidates[0].atom == "good"  # RAP holds only cos >= delta
    assert [c.atom for c in run.rounds[0].candidates] == ["good"]
    assert run.rounds[1].sampled_chunk == "c2"
    proposes = [s[1] for s in steps.seen if s[0] == "propose"]
    assert proposes[1] == ["c1", "c2"]  # C_1 + c_s
    assert [e.chunk_id for e in run.context] == ["c1", "c3"]  # c_s never enters C
    assert state.S["c1"] == 0.0 and state.V["c1"] == 2


def test_sft_examples_follow_the_spec_format():
    pairs = [
        ("Who directed Sweetgrass?", "Lucien Castaing-Taylor"),
        ("Where was Lucien Castaing-Taylor born?", "Liverpool"),
    ]
    ex = sft_examples("Where was the director of Sweetgrass born?", pairs, question_id="x")
    assert len(ex) == 3  # t + 1
    assert ex[0]["completion"] == (
        "<decompose>True</decompose><sub-question>Who directed Sweetgrass?</sub-question>"
    )
    assert ex[2]["completion"] == "<decompose>False</decompose>"
    assert "(none)" in ex[0]["prompt"]
    assert "Lucien Castaing-Taylor" in ex[1]["prompt"] and "Liverpool" not in ex[1]["prompt"]
    assert "Liverpool" in ex[2]["prompt"]
    assert ex[1]["messages"][-1] == {"role": "assistant", "content": ex[1]["completion"]}
    # the completion parses with the registry's own decompose parser
    assert parse_decompose(ex[0]["completion"])["sub_question"] == "Who directed Sweetgrass?"
    assert parse_decompose(ex[2]["completion"]) == {"decompose": False, "sub_question": None}


class AnsweringSteps(ScriptedSteps):
    def __init__(self, answers, **kw):
        super().__init__(**kw)
        self.answers = list(answers)

    def answer(self, question, context):
        from kg_platform.reasoning.steps import Draft

        return Draft(self.answers.pop(0))


def test_collector_reruns_until_correct_and_exports_t_plus_one_examples(tmp_path):
    source = MemorySource(atoms={"p": [atom("c1", "Who directed Sweetgrass?", 0.9)]})
    steps = AnsweringSteps(
        ["Paris", "Liverpool"],
        proposals=[Proposal(["p"]), Proposal([], True), Proposal(["p"]), Proposal([], True)],
        selections=[Selection(0), Selection(0)],
    )
    stored = []
    collector = Collector(
        steps, source, attempts=3, store=lambda item, run, attempt: stored.append((attempt, run.f1))
    )
    item = QAItem("q1", "Where was the director of Sweetgrass born?", ["Liverpool"])
    report = collect_to_jsonl(collector, [item], tmp_path / "sft.jsonl")
    assert stored == [(1, 0.0), (2, 1.0)]
    lines = [json.loads(x) for x in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["question_id"] == "q1"
    assert report.solved == 1 and report.runs == 2 and report.examples == 2


def test_answer_scores_are_squad_style():
    assert exact_match("The Liverpool.", ["liverpool"]) == 1.0
    assert token_f1("in Liverpool, England", ["Liverpool"]) == 0.5
    assert token_f1("", ["Liverpool"]) == 0.0


def test_read_questions_reads_answers_and_aliases(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps({"id": "1", "question": "Q?", "answer": "A", "answer_aliases": ["B"]}) + "\n"
    )
    assert read_questions(path)[0].answers == ["A", "B"]
