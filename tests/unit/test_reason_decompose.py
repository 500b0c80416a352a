"""PIKE-RAG Algorithm 1 (spec §5.7) as a loop: each early stop, the reference code's fallbacks and
backup selection, N rounds. The LLM steps and the knowledge base are scripted here; the same loop
against Neo4j and the HTTP LLM client is in tests/integration/test_reason_decompose.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from kg_platform.reasoning.candidates import ContextCandidate, dedupe_atoms
from kg_platform.reasoning.decompose import (
    STOP_MAX_ROUNDS,
    STOP_NO_CANDIDATES,
    STOP_NO_PROPOSALS,
    STOP_NO_SELECTION,
    STOP_SUFFICIENT,
    Decomposer,
    clean_proposals,
)
from kg_platform.reasoning.steps import Draft, Feedback, Proposal, Selection
from kg_platform.reasoning.types import Usage


@dataclass
class ScriptedSteps:
    """Replies taken in order per step; records what each step was shown."""

    proposals: list[Proposal] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)
    backups: list[Selection] = field(default_factory=list)
    seen: list[tuple[str, object]] = field(default_factory=list)

    def propose(self, question, context):
        self.seen.append(("propose", [e.chunk_id for e in context]))
        return self.proposals.pop(0)

    def select(self, question, context, candidates):
        self.seen.append(("select", list(candidates)))
        return self.selections.pop(0)

    def backup_select(self, question, context, paragraphs):
        self.seen.append(("backup_select", list(paragraphs)))
        return self.backups.pop(0)

    def answer(self, question, context):
        return Draft("x")

    def feedback(self, question, context, answer):
        return Feedback(10, 1)

    def classify(self, question):
        return "factual"

    def sub_answer(self, question, chunk_text):
        return "a"

    def usage(self):
        return Usage(calls=len(self.seen), prompt_tokens=10 * len(self.seen))


@dataclass
class MemorySource:
    """A knowledge base of (atomic question, chunk, cosine-to-any-query) triples."""

    atoms: dict[str, list[ContextCandidate]] = field(default_factory=dict)  # query -> hits
    chunks: dict[str, list[ContextCandidate]] = field(default_factory=dict)
    calls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def via_atoms(self, queries, chosen, *, k, delta, path="atom"):
        self.calls.append((path, tuple(queries)))
        hits = [c for q in queries for c in self.atoms.get(q, [])[:k]]
        return dedupe_atoms(
            [
                ContextCandidate(**{**c.__dict__, "path": path})
                for c in hits
                if c.cos >= delta and c.chunk_id not in chosen
            ]
        )

    def via_chunks(self, query, chosen, *, k, delta):
        self.calls.append(("chunk", (query,)))
        return [
            c for c in self.chunks.get(query, [])[:k] if c.cos >= delta and c.chunk_id not in chosen
        ]


def atom(chunk: str, text: str, cos: float) -> ContextCandidate:
    return ContextCandidate(
        chunk_id=chunk, chunk_text=f"text of {chunk}", cos=cos, atom_id=f"a-{text}", atom=text
    )


Q = "Where was the director of Sweetgrass born?"


def test_context_judged_sufficient_stops_before_retrieval():
    steps = ScriptedSteps(proposals=[Proposal([], sufficient=True)])
    source = MemorySource()
    run = Decomposer(steps, source).run(Q)
    assert run.stop_reason == STOP_SUFFICIENT
    assert run.context == [] and source.calls == []
    assert len(run.rounds) == 1 and run.rounds[0].stop == STOP_SUFFICIENT


def test_no_usable_proposal_stops():
    steps = ScriptedSteps(proposals=[Proposal(["  ", "?"], sufficient=False)])
    run = Decomposer(steps, MemorySource()).run(Q)
    assert run.stop_reason == STOP_NO_PROPOSALS and run.chosen == []


def test_no_candidate_reaching_delta_stops_after_both_fallbacks():
    source = MemorySource(
        atoms={"Who directed Sweetgrass?": [atom("c1", "Who directed Sweetgrass?", 0.49)]},
        chunks={Q: [atom("c9", "x", 0.2)]},
    )
    steps = ScriptedSteps(proposals=[Proposal(["Who directed Sweetgrass?"])])
    run = Decomposer(steps, source, delta=0.5).run(Q)
    assert run.stop_reason == STOP_NO_CANDIDATES
    # proposals first, then fallback 1 (atoms of the question), then fallback 2 (chunks)
    assert [c[0] for c in source.calls] == ["atom", "atom-question", "chunk"]
    assert source.calls[1][1] == (Q,)
    assert not any(s[0] == "select" for s in steps.seen)


def test_without_fallbacks_only_the_proposals_are_searched():
    source = MemorySource()
    steps = ScriptedSteps(proposals=[Proposal(["Who directed Sweetgrass?"])])
    run = Decomposer(steps, source, fallbacks=False).run(Q)
    assert run.stop_reason == STOP_NO_CANDIDATES and len(source.calls) == 1


def test_fallback_one_and_two_supply_candidates():
    source = MemorySource(atoms={Q: [atom("c2", "Where was Lucien born?", 0.7)]})
    steps = ScriptedSteps(
        proposals=[Proposal(["unknown"]), Proposal([], sufficient=True)], selections=[Selection(0)]
    )
    run = Decomposer(steps, source).run(Q)
    assert [c.chunk_id for c in run.chosen] == ["c2"] and run.chosen[0].path == "atom-question"

    source2 = MemorySource(
        chunks={Q: [ContextCandidate("c3", "chunk three", 0.6, None, None, Q, "chunk")]}
    )
    steps2 = ScriptedSteps(
        proposals=[Proposal(["unknown"]), Proposal([], sufficient=True)], selections=[Selection(0)]
    )
    run2 = Decomposer(steps2, source2).run(Q)
    assert [c.path for c in run2.chosen] == ["chunk"]
    # a chunk without atomic question is shown to the selector by its opening
    assert steps2.seen[1] == ("select", ["chunk three"])


def test_no_selection_after_backup_stops():
    source = MemorySource(
        atoms={"p": [atom("c1", "q1", 0.8), atom("c1", "q1b", 0.7), atom("c2", "q2", 0.6)]}
    )
    steps = ScriptedSteps(
        proposals=[Proposal(["p"])], selections=[Selection(None)], backups=[Selection(None)]
    )
    run = Decomposer(steps, source).run(Q)
    assert run.stop_reason == STOP_NO_SELECTION and run.chosen == []
    # the backup prompt sees one paragraph per distinct chunk
    assert steps.seen[-1] == ("backup_select", ["text of c1", "text of c2"])


def test_backup_selection_picks_a_paragraph_when_atom_selection_fails():
    source = MemorySource(atoms={"p": [atom("c1", "q1", 0.8), atom("c2", "q2", 0.6)]})
    steps = ScriptedSteps(
        proposals=[Proposal(["p"]), Proposal([], sufficient=True)],
        selections=[Selection(7)],  # out of range = failed
        backups=[Selection(1)],
    )
    run = Decomposer(steps, source).run(Q)
    assert [c.chunk_id for c in run.chosen] == ["c2"]
    assert run.rounds[0].selected_by == "backup_select"
    assert run.stop_reason == STOP_SUFFICIENT


def test_context_grows_by_the_chosen_chunk_and_chosen_chunks_are_dropped():
    source = MemorySource(atoms={"p": [atom("c1", "q1", 0.9), atom("c2", "q2", 0.8)]})
    steps = ScriptedSteps(
        proposals=[Proposal(["p"]), Proposal(["p"]), Proposal(["p"])],
        selections=[Selection(0), Selection(0)],
    )
    run = Decomposer(steps, source, max_rounds=3).run(Q)
    assert [e.chunk_id for e in run.context] == ["c1", "c2"]
    # the proposer sees the context grow, the selector never sees a chunk already in context
    proposes = [s[1] for s in steps.seen if s[0] == "propose"]
    assert proposes == [[], ["c1"], ["c1", "c2"]]
    selects = [s[1] for s in steps.seen if s[0] == "select"]
    assert selects == [["q1", "q2"], ["q2"]]
    assert run.stop_reason == STOP_NO_CANDIDATES  # round 3: every candidate is in context


def test_n_rounds_then_stop():
    source = MemorySource(atoms={"p": [atom(f"c{i}", f"q{i}", 0.9 - i / 100) for i in range(5)]})
    steps = ScriptedSteps(proposals=[Proposal(["p"])] * 2, selections=[Selection(0)] * 2)
    run = Decomposer(steps, source, max_rounds=2).run(Q)
    assert run.stop_reason == STOP_MAX_ROUNDS and len(run.chosen) == 2
    assert all(r.tokens > 0 for r in run.rounds)
    steps_json = run.steps_json()
    assert steps_json[0]["selected"]["chunk_id"] == "c0"
    assert steps_json[0]["candidates"][0]["cos"] == 0.9


def test_clean_proposals_dedupes_and_caps():
    assert clean_proposals(["Who is A?", "who is a", " ", "Who is B?", "C?"], 2) == [
        "Who is A?",
        "Who is B?",
    ]
