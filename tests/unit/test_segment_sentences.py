"""The rule-based sentence splitter: abbreviations, decimals, initials, lists, line structure."""

import pytest

from kg_platform.segmenting.sentences import split_sentences, split_units


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "Dr. Smith went to Washington. He arrived at 3.5 p.m. on Monday.",
            ["Dr. Smith went to Washington.", "He arrived at 3.5 p.m. on Monday."],
        ),
        (
            "Use tools, e.g. hammers, i.e. heavy ones. Then stop!",
            ["Use tools, e.g. hammers, i.e. heavy ones.", "Then stop!"],
        ),
        (
            "The U.S. economy grew by 2.5 percent. Prices fell.",
            ["The U.S. economy grew by 2.5 percent.", "Prices fell."],
        ),
        ("He moved to the U.S. The move was hard.", ["He moved to the U.S.", "The move was hard."]),
        (
            "J. R. R. Tolkien wrote books. Version 1.2.3 shipped.",
            ["J. R. R. Tolkien wrote books.", "Version 1.2.3 shipped."],
        ),
        ("Is it? Yes! It is... Fine.", ["Is it?", "Yes!", "It is...", "Fine."]),
        ('She said "stop." Then left.', ['She said "stop."', "Then left."]),
        (
            "See Fig. 3 and No. 5 in Vol. 2 of the report.",
            ["See Fig. 3 and No. 5 in Vol. 2 of the report."],
        ),
        ("Smith et al. The study was large.", ["Smith et al.", "The study was large."]),
        ("pH was 7.4 at 10 a.m. and rose.", ["pH was 7.4 at 10 a.m. and rose."]),
        ("", []),
    ],
)
def test_sentences(text, expected):
    assert split_sentences(text) == expected


def test_soft_wrapped_lines_join_and_blank_lines_separate():
    text = "A sentence that wraps\nonto the next line. Another\n\nNew paragraph without stop"
    assert split_sentences(text) == [
        "A sentence that wraps onto the next line.",
        "Another",
        "New paragraph without stop",
    ]


def test_bullets_and_numbered_items_are_their_own_units():
    text = "Intro:\n- first item\n* second item. With more.\n1. numbered\n2) also\n\u2022 dot"
    assert split_units(text) == [
        "Intro:",
        "- first item",
        "* second item. With more.",
        "1. numbered",
        "2) also",
        "\u2022 dot",
    ]
    assert "* second item." in split_sentences(text)


def test_table_rows_and_headings_stay_whole():
    text = "# Title\n| a | b. c |\n|---|---|\n| 1. | 2 |"
    assert split_sentences(text) == ["# Title", "| a | b. c |", "|---|---|", "| 1. | 2 |"]


def test_no_text_is_lost():
    text = (
        "Mr. Jones (b. 1950) lived in St. Louis, Mo. until 1990. He moved. "
        "Costs rose 3.2% vs. 2.9% in 2019, i.e. faster."
    )
    joined = " ".join(split_sentences(text))
    assert joined.split() == text.split()
