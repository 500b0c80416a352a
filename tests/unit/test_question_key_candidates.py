"""The spaCy-free question finder's text side: which word n-grams of a question are looked up
among the corpus's entity keys, which capitalised runs count as names, and which matches win."""

from __future__ import annotations

from kg_platform.retrieval.strategies.question_keys import (
    candidate_keys,
    capitalised_names,
    longest_matches,
    singular,
    words,
)

QUESTION = "Which films did the director of Sweetgrass's sequel shoot in New York City?"


def test_words_split_off_possessives_and_sentence_full_stops_but_keep_abbreviations():
    question = "Was Sweetgrass's director born in the U.S.? He was."
    expected = "Was Sweetgrass director born in the U.S. He was".split()
    assert [question[s:e] for s, e in words(question)] == expected


def test_singular_turns_only_the_last_word():
    assert singular("films") == "film"
    assert singular("american film directors") == "american film director"
    assert singular("countries") == "country"
    assert singular("glass") == "glass"  # not a plural
    assert singular("bus") == "bus"  # too short to tell


def test_candidate_keys_are_normalised_n_grams_with_a_singular_variant():
    keys = candidate_keys(QUESTION)
    assert {"film", "films", "sweetgrass", "sweetgrass sequel", "new york city"} <= set(keys)
    assert "director of sweetgrass" in keys  # a function word inside an n-gram is fine
    # never starting or ending on a function word, never the possessive's "s"
    assert not {"which films", "the director", "director of", "sweetgrasss"} & set(keys)
    first, end, surface = keys["film"][0]
    assert (first, end, surface) == (1, 2, "films")


def test_capitalised_names_skip_the_question_word_and_glue_of():
    assert [n for _, _, n in capitalised_names(QUESTION)] == ["Sweetgrass", "New York City"]
    assert [n for _, _, n in capitalised_names("Who founded the Bank of America?")] == [
        "Bank of America"
    ]


def test_the_longest_match_wins_and_matches_do_not_overlap():
    candidates = candidate_keys(QUESTION)
    found = {"new york": "place", "new york city": "place", "city": "concept", "film": "concept"}
    kept = [(key, surface) for _, _, key, surface in longest_matches(found, candidates)]
    assert kept == [("film", "films"), ("new york city", "New York City")]


def test_a_pasted_page_is_read_only_up_to_its_first_words():
    from kg_platform.retrieval.strategies.question_keys import MAX_QUESTION_WORDS, MAX_WORDS

    page = " ".join(f"word{i}" for i in range(10 * MAX_QUESTION_WORDS))
    keys = candidate_keys(page)
    assert "word0" in keys and f"word{MAX_QUESTION_WORDS}" not in keys
    assert len(keys) <= MAX_QUESTION_WORDS * MAX_WORDS


def test_accents_and_case_fold_as_the_layer_s_keys_do_and_punctuation_alone_finds_nothing():
    assert "zurich" in candidate_keys("Which river flows through ZÜRICH?")
    assert "beyonce" in candidate_keys("who managed beyoncé")  # lowercase still matches
    assert candidate_keys("?!") == {}
