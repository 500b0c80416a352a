"""MoG levels (doubling, odd trailing chunk promoted) and pieces (one or two sentences)."""

from kg_platform.granularity.levels import JOINER, LevelChunk, build_levels
from kg_platform.granularity.pieces import make_pieces
from kg_platform.segmenting.fixed import Unit


def _level1(n: int) -> list[LevelChunk]:
    return [LevelChunk(1, i, f"c{i}", 10) for i in range(n)]


def test_each_level_pairs_adjacent_chunks_and_promotes_an_odd_tail():
    levels = build_levels(_level1(5), levels=5)
    assert [len(level) for level in levels] == [5, 3, 2, 1, 1]
    assert [c.children for c in levels[1]] == [[0, 1], [2, 3], [4]]
    assert levels[1][2].text == "c4"  # promoted alone
    assert levels[2][0].text == JOINER.join(["c0", "c1", "c2", "c3"])
    for g in range(1, 5):
        for parent in levels[g]:
            kids = [levels[g - 1][o] for o in parent.children]
            assert 1 <= len(kids) <= 2
            assert parent.text == JOINER.join(k.text for k in kids)
            assert parent.tokens == sum(k.tokens for k in kids)


def test_a_single_chunk_exists_at_every_level():
    levels = build_levels(_level1(1), levels=5)
    assert [len(level) for level in levels] == [1] * 5


def test_pieces_merge_a_short_sentence_with_its_successor_only():
    units = [
        Unit("Short.", 2, 0),
        Unit("A long enough sentence here.", 20, 1),
        Unit("Another long sentence right here.", 20, 2),
        Unit("Tiny.", 2, 3),
    ]
    pieces = make_pieces(units, min_tokens=12)
    assert [p.sentences for p in pieces] == [(0, 1), (2,), (3,)]
    assert pieces[0].text == "Short. A long enough sentence here."


def test_parts_of_one_sentence_share_its_index():
    units = [Unit("part one", 5, 4), Unit("part two", 5, 4)]
    assert [p.sentences for p in make_pieces(units, 12)] == [(4,)]


def _u(text: str, tokens: int, index: int) -> Unit:
    return Unit(text, tokens, index)


def test_a_list_with_its_lead_in_is_one_piece_not_pairs_of_items():
    units = [
        _u("The tool converts these formats:", 7, 0),
        _u("- PDF", 2, 1),
        _u("- PowerPoint", 2, 2),
        _u("- Word", 2, 3),
        _u("- Excel", 2, 4),
        _u("A long enough sentence after the list ends it.", 12, 5),
    ]
    pieces = make_pieces(units, min_tokens=12)
    assert [p.sentences for p in pieces] == [(0, 1, 2, 3, 4), (5,)]
    assert pieces[0].text == "The tool converts these formats: - PDF - PowerPoint - Word - Excel"
    assert pieces[0].tokens == 7 + 2 * 4 + 4


def test_a_long_list_is_packed_in_order_under_the_cap():
    units = [_u(f"- item number {i}", 10, i) for i in range(10)]
    pieces = make_pieces(units, min_tokens=12, list_tokens=40)
    assert all(p.tokens <= 40 for p in pieces)
    assert [i for p in pieces for i in p.sentences] == list(range(10))
    assert [len(p.sentences) for p in pieces] == [3, 3, 3, 1]


def test_table_rows_stay_together_and_a_lone_item_pairs_as_before():
    rows = [_u("| a | b |", 5, 0), _u("|---|---|", 5, 1), _u("| 1 | 2 |", 5, 2)]
    assert [p.sentences for p in make_pieces(rows, 12, "\n")] == [(0, 1, 2)]
    assert make_pieces(rows, 12, "\n")[0].text == "| a | b |\n|---|---|\n| 1 | 2 |"
    lone = [_u("- one item", 3, 0), _u("A sentence that is long enough here.", 12, 1)]
    assert [p.sentences for p in make_pieces(lone, 12)] == [(0, 1)]


def test_initials_and_numbers_in_prose_are_not_list_items():
    from kg_platform.segmenting.lists import unit_kind

    assert unit_kind("J. R. R. Tolkien wrote The Hobbit.") == "text"
    assert unit_kind("A. Smith won the race.") == "text"
    assert unit_kind("1990 was a year.") == "text"
    assert [
        unit_kind(t) for t in ("- PDF", "* Word", "1. one", "2) two", "(a) x", "b. y", "C) z")
    ] == ["item"] * 7
    assert unit_kind("| a | b |") == "row"
