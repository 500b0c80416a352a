"""The title matcher's rule (ingest/title_match.py): whole tokens, case, weak one-word keys."""

from __future__ import annotations

from kg_platform.ingest.title_match import TitleMatcher, references, title_key


def _names(titles: list[str], text: str) -> dict[str, int]:
    matcher = TitleMatcher((t, t) for t in titles)
    return matcher.names(text)


def test_whole_tokens_and_case():
    titles = ["Jason Moore (director)", "Moore"]
    assert _names(titles, "It was directed by Jason Moore in 2012.") == {
        "Jason Moore (director)": 1
    }
    assert _names(titles, "directed by jason moore") == {}
    assert _names(titles, "directed by Jason Moores") == {}
    assert title_key("Move (1970 film)") == "Move"


def test_weak_keys_are_skipped():
    titles = ["1970", "The", "Ohio", "Love", "Manon (disambiguation)"]
    text = "In 1970 The band played in Ohio. Love came later, and Manon too."
    assert _names(titles, text) == {"Ohio": 1}
    assert not TitleMatcher.eligible("Manon (disambiguation)")
    assert not TitleMatcher.eligible("Ohio", min_chars=5)


def test_one_word_keys_need_to_be_names_on_their_own():
    titles = ["Virginia", "Paris"]
    assert _names(titles, "He lived in West Virginia and then in Virginia.") == {"Virginia": 1}
    assert _names(titles, "Paris is big. She met Paris Hilton in Paris, France.") == {"Paris": 1}


def test_a_disambiguated_one_word_title_counts_in_quotes_only():
    titles = ["Orgasm (album)"]
    assert _names(titles, 'They released the album "Orgasm" in 1970.') == {"Orgasm (album)": 1}
    assert _names(titles, "They wrote about Orgasm research.") == {}


def test_a_disambiguated_name_inside_a_longer_one_is_someone_else():
    titles = ["Jacques Rousseau (painter)"]
    assert _names(titles, "the partner of Jean- Jacques Rousseau.") == {}
    assert _names(titles, "painted by Jacques Rousseau.") == {"Jacques Rousseau (painter)": 1}


def test_a_source_never_references_itself_or_its_namesakes():
    titles = {"a": "Peter Pan (2003 film)", "b": "Peter Pan (1953 film)", "c": "J. M. Barrie"}
    matcher = TitleMatcher(titles.items())
    got = references(matcher, titles, "a", ["Peter Pan is a film after J. M. Barrie's play."])
    assert got == {"c": 1}
