"""Planning a source (no I/O): sections never mix, tables/figures are their own level-1 chunks,
pieces stay inside their chunk, sentence indexes follow the source (or the QA dataset)."""

import pytest

from kg_platform.granularity.pieces import LIST_PIECE_TOKENS
from kg_platform.errors import EmptyDocument, SourceTooLarge
from kg_platform.ingest.plan import document_input, plan_source
from kg_platform_lab.qa_ingest import _paragraph_input
from kg_platform.parsing.model import Block, ParsedDocument, Section
from kg_platform.segmenting.chunker import FixedChunker

LONG = " ".join(
    f"Sentence number {i} talks about the topic at some length here." for i in range(40)
)


def _doc() -> ParsedDocument:
    intro = Section(
        "Intro",
        1,
        [
            Block(LONG),
            Block("| a | b |\n|---|---|\n| 1 | 2 |", "table"),
            Block("Figure 1: a duck.", "figure"),
            Block("After the table."),
        ],
    )
    other = Section("Other", 1, [Block("Other section text. It is short.")])
    return ParsedDocument(
        "/x/doc.md", "Doc", "text/markdown", Section("Doc", 0, [], [intro, other])
    )


def _plan(doc=None, **kw):
    inp = document_input(doc or _doc(), "c", "sig")
    args = dict(budget=128, levels=5, min_piece_tokens=12) | kw
    return plan_source(inp, FixedChunker(args["budget"]), **args)


def test_sections_tables_figures_and_levels():
    plan = _plan()
    assert [s.path for s in plan.sections] == ["Doc", "Doc > Intro", "Doc > Other"]
    assert plan.sections[1].parent_id == plan.sections[0].id
    assert plan.sections[0].parent_id == plan.source.id
    by_id = {c.id: c for c in plan.chunks}
    l1 = [c for c in plan.chunks if c.level == 1]
    kinds = [c.kind for c in l1]
    assert kinds.count("table") == 1 and kinds.count("figure") == 1
    table = next(c for c in l1 if c.kind == "table")
    assert table.text == "| a | b |\n|---|---|\n| 1 | 2 |"
    for rel in plan.part_of:  # never across sections
        assert by_id[rel.child].section_id == by_id[rel.parent].section_id
    for g in range(1, 6):
        assert any(c.level == g for c in plan.chunks)
    assert len({c.id for c in plan.chunks}) == len(plan.chunks)


def test_pieces_are_inside_their_chunk_and_sentence_indexes_increase():
    plan = _plan()
    text_of = {c.id: c.text for c in plan.chunks}
    last = -1
    for piece in plan.pieces:
        assert piece.text in text_of[piece.chunk_id]
        sentences = piece.sentences
        assert sentences and sentences[0] > last
        # one or two sentences, or a list/table run packed under its cap (pieces rules v2)
        assert len(sentences) <= 2 or piece.tokens <= LIST_PIECE_TOKENS
        last = sentences[-1]
    assert [p.doc_ord for p in plan.pieces] == list(range(len(plan.pieces)))
    assert len(plan.piece_next) == len(plan.pieces) - 1


def test_limits_and_empty_documents():
    with pytest.raises(SourceTooLarge):
        _plan(max_tokens=50)
    empty = ParsedDocument("/x/e.md", "E", "text/markdown", Section("E", 0, [Block("   ")]))
    with pytest.raises(EmptyDocument):
        _plan(empty)


def test_qa_paragraph_keeps_dataset_sentence_indexes():
    para = {
        "doc_id": "hotpotqa:1",
        "title": "T",
        "sentences": [
            "First one.",
            " Second one is here with more words in it, and more.",
            " Third.",
        ],
    }
    plan = plan_source(
        _paragraph_input("c", "hotpotqa", para),
        FixedChunker(128),
        budget=128,
        levels=5,
        min_piece_tokens=12,
    )
    assert [p.sentences for p in plan.pieces] == [(0, 1), (2,)]
    assert plan.source.uri == "qa://hotpotqa/hotpotqa:1"
    musique = {
        "doc_id": "musique:1",
        "title": "M",
        "sentences": [
            "Alpha is a town in a valley far away from the sea. It has a "
            "river running through it from north to south. Beta is near."
        ],
    }
    plan = plan_source(
        _paragraph_input("c", "musique", musique),
        FixedChunker(128),
        budget=128,
        levels=5,
        min_piece_tokens=12,
    )
    assert len(plan.pieces) == 3 and all(p.sentences == (0,) for p in plan.pieces)


def _paragraphs_doc() -> ParsedDocument:
    """Four paragraphs in one section: ~76, ~76, ~32 and ~285 tokens (at a 128-token budget)."""

    def para(word: str, n: int) -> str:
        return " ".join(f"The {word} sentence {i} says one thing here." for i in range(n))

    body = [Block(para("alpha", 7)), Block(para("beta", 7)), Block(para("gamma", 3))]
    body.append(Block(para("delta", 26)))
    sec = Section("Body", 1, body)
    return ParsedDocument("/x/p.md", "P", "text/markdown", Section("P", 0, [], [sec]))


def test_keep_paragraphs_never_puts_parts_of_two_paragraphs_in_one_chunk():
    words = ("alpha", "beta", "gamma", "delta")

    def level1_words(plan):
        return [[w for w in words if f"The {w} " in c.text] for c in plan.chunks if c.level == 1]

    packed = level1_words(_plan(_paragraphs_doc()))
    # the default packs sentences across paragraph breaks: some chunk mixes alpha and beta
    assert any(len(ws) > 1 and "delta" not in ws for ws in packed)
    kept = _plan(_paragraphs_doc(), keep_paragraphs=True)
    chunks = level1_words(kept)
    # alpha and beta do not fit together (76 + 76 > 128); gamma fits whole beside beta; delta
    # (over budget) is cut at sentences into chunks of its own
    assert chunks[0] == ["alpha"] and chunks[1] == ["beta", "gamma"]
    assert all(ws == ["delta"] for ws in chunks[2:]) and len(chunks) >= 4
    assert all(c.tokens <= 128 for c in kept.chunks if c.level == 1)
    # every sentence is still in exactly one level-1 chunk, in order
    text = " ".join(c.text for c in kept.chunks if c.level == 1)
    assert text.count("sentence") == 7 + 7 + 3 + 26


def test_small_paragraphs_share_a_chunk_when_whole_ones_fit():
    def para(word: str) -> Block:
        return Block(f"The {word} paragraph is short. It has two sentences.")

    sec = Section("Body", 1, [para(w) for w in ("one", "two", "three")])
    doc = ParsedDocument("/x/s.md", "S", "text/markdown", Section("S", 0, [], [sec]))
    l1 = [c for c in _plan(doc, keep_paragraphs=True).chunks if c.level == 1]
    assert len(l1) == 1 and all(w in l1[0].text for w in ("one", "two", "three"))


def test_keep_paragraphs_is_in_the_pipeline_signature():
    from kg_platform.config import Settings
    from kg_platform.ingest.plan import pipeline_signature

    packed = pipeline_signature(Settings(segment={"paragraphs": "pack"}), "m")
    assert "para=" not in packed  # graphs stored before the option existed still match "pack"
    # the default ("keep") differs from them, so those graphs are re-chunked on the next run
    keep = pipeline_signature(Settings(), "m")
    assert "|para=keep" in keep and keep.replace("|para=keep", "") == packed
