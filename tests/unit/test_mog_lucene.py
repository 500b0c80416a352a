"""Question text must reach Lucene as plain terms, never as query syntax."""

from kg_platform.graph.lucene import escape_lucene, fulltext_query


def test_special_characters_are_escaped():
    assert (
        escape_lucene('a+b (c) "d" e:f g/h ~i* j? k!')
        == 'a\\+b \\(c\\) \\"d\\" e\\:f g\\/h \\~i\\* j\\? k\\!'
    )
    assert escape_lucene("x && y || z \\") == "x \\&\\& y \\|\\| z \\\\"
    assert escape_lucene("[1 TO 5] {a} ^2 -x") == "\\[1 to 5\\] \\{a\\} \\^2 \\-x"


def test_boolean_words_become_plain_terms():
    assert escape_lucene("cats AND dogs OR NOT birds") == "cats and dogs or not birds"
    assert escape_lucene("Android ORacle") == "Android ORacle"


def test_empty_or_symbol_only_queries_are_empty():
    assert fulltext_query("  ?!  ") == ""
    assert fulltext_query("Who  wrote\n'Hamlet'?") == "Who wrote 'Hamlet'\\?"
