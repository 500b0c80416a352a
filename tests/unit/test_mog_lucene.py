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


def test_english_stop_words_leave_the_query_unless_nothing_else_remains():
    assert fulltext_query("What is the capital of France?") == "What capital France\\?"
    # case and punctuation around a stop word do not keep it; other words keep theirs
    assert fulltext_query("(The) cat, is here.") == "cat, here."
    # a question made only of stop words is searched as it is, not emptied
    assert fulltext_query("To be or not to be") == "To be or not to be"
    # "AND" is a stop word once it is a plain term; the rest of the question stays escaped
    assert fulltext_query('Who wrote "AND" (1999)?') == "Who wrote \\(1999\\)\\?"
    assert fulltext_query("the cat", drop_stop_words=False) == "the cat"
