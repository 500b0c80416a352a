"""Sentence-complete fixed-size chunking up to a token budget."""

from kg_platform.segmenting.chunker import FixedChunker
from kg_platform.segmenting.fixed import Unit, make_units, pack_units, split_long_units
from kg_platform.tokens import count_tokens


def _units(*tokens: int) -> list[Unit]:
    return [Unit(f"s{i}", n, i) for i, n in enumerate(tokens)]


def test_packs_whole_sentences_within_budget():
    chunks = pack_units(_units(50, 50, 50, 20, 100), budget=128)
    assert [[u.index for u in c] for c in chunks] == [[0, 1], [2, 3], [4]]
    for chunk in chunks:
        assert sum(u.tokens for u in chunk) + len(chunk) - 1 <= 128


def test_overlong_sentence_is_its_own_chunk_and_not_cut_below_hard_limit():
    units = _units(10, 200, 10)
    split = split_long_units(units, budget=128, hard_factor=2.0)
    assert len(split) == 3
    assert [[u.index for u in c] for c in pack_units(split, 128)] == [[0], [1], [2]]


def test_sentence_far_over_budget_is_cut_at_the_budget_keeping_its_index():
    text = " ".join(f"word{i}" for i in range(400))
    [unit] = make_units([text], first_index=7)
    parts = split_long_units([unit], budget=128, hard_factor=2.0)
    assert len(parts) >= 3
    assert all(p.index == 7 and p.tokens <= 128 for p in parts)
    assert " ".join(p.text for p in parts).split() == text.split()


def test_fixed_chunker_measured_tokens_stay_in_budget():
    sentences = [
        f"This is sentence number {i} of a longer test document about chunking." for i in range(60)
    ]
    chunks = FixedChunker(128).chunk(make_units(sentences))
    assert len(chunks) > 3
    assert [u.text for c in chunks for u in c] == sentences  # order kept, nothing lost
    for chunk in chunks:
        assert count_tokens(" ".join(u.text for u in chunk)) <= 128


def test_a_list_that_fits_the_budget_is_not_cut_across_chunks():
    from kg_platform.segmenting.fixed import Unit, pack_units

    prose = [Unit(f"Prose sentence number {i} here.", 30, i) for i in range(3)]
    lead = Unit("It converts these formats:", 6, 3)
    items = [Unit(f"- format {i}", 4, 4 + i) for i in range(6)]
    chunks = pack_units([*prose, lead, *items], budget=100)
    # greedy packing would put the lead-in and two items after the prose (90 + 7 + 5 + 5)
    assert [[u.index for u in c] for c in chunks] == [[0, 1, 2], [3, 4, 5, 6, 7, 8, 9]]
    # a list longer than the budget is packed as before, never dropped
    long_list = [Unit(f"- item {i}", 40, i) for i in range(4)]
    assert [len(c) for c in pack_units(long_list, budget=100)] == [2, 2]
