"""Pure logic of the distilled layer (no Neo4j): name keys, merge guards, mention cleaning, tag
rows, step parsing, and forward-summary chunking (spec §5.3) against the scripted LLM server."""

from __future__ import annotations

import json

import pytest

from kg_platform.config import Settings
from kg_platform.distilling import parse_steps
from kg_platform.distilling.common import normalise_name
from kg_platform.distilling.entities import _EntityVectors, compatible, mentions_of
from kg_platform.segmenting.forward_summary import ForwardSummaryChunker
from kg_platform.distilling.tagging import tag_rows
from kg_platform.errors import ConfigError, LLMNotConfigured
from kg_platform.llm import get_llm
from kg_platform.llm.prompts import ChunkTags, EntityGraph
from kg_platform.segmenting.fixed import make_units
from support.fake_openai import FakeOpenAI, Status, llm_settings_for


def test_normalise_name_folds_case_accents_punctuation_and_articles():
    assert normalise_name("The Beatles") == normalise_name("beatles") == "beatles"
    assert normalise_name("U.S.A.") == "usa"
    assert normalise_name("Marie Skłodowska-Curie") == "marie skłodowska curie"
    assert normalise_name("Zoë  Saldaña") == "zoe saldana"


def test_merge_guard_types_numbers_initials():
    assert compatible("warsaw", "place", "warsaw poland", "place")
    assert compatible("warsaw", "place", "warsaw poland", "thing")
    assert not compatible("paris", "place", "paris", "person")
    assert not compatible("world war i", "event", "world war ii", "event")
    assert not compatible("george w bush", "person", "george h w bush", "person")


def test_a_new_name_joins_the_closest_compatible_entity_created_earlier_in_its_batch():
    import numpy as np

    def unit(*xs: float) -> np.ndarray:
        v = np.asarray(xs, dtype=np.float32)
        return v / np.linalg.norm(v)

    created = _EntityVectors(capacity=1, dim=3)  # grows past its capacity
    assert created.nearest("warsaw", "place", unit(1, 0, 0), 0.9) is None  # nothing yet
    created.add("e-ww2", "world war ii", "event", unit(1, 0, 0))
    created.add("e-warsaw", "warsaw", "place", unit(0.95, 0.3, 0))
    created.add("e-far", "kraków", "place", unit(0, 1, 0))
    # the closest (world war ii, cos 1.0) fails the type guard; the next one above 0.9 joins
    assert created.nearest("warsaw poland", "place", unit(1, 0, 0), 0.9) == "e-warsaw"
    # the number guard: "world war i" is never "world war ii", and nothing else is close enough
    assert created.nearest("world war i", "event", unit(1, 0, 0), 0.99) is None
    assert created.nearest("gdańsk", "place", unit(0, 0, 1), 0.9) is None  # none close enough


def test_mentions_dedupe_and_relations_add_their_endpoints():
    out = EntityGraph.model_validate(
        {
            "entities": [
                {"name": "Ada Lovelace", "type": "Person"},
                {"name": "ada lovelace."},
                {"name": "X"},
            ],
            "relations": [
                {"source": "Ada Lovelace", "target": "Analytical Engine", "type": "wrote notes on"},
                {"source": "Ada Lovelace", "target": "ada lovelace", "type": "is"},
            ],
        }
    )
    ments, rels = mentions_of(out, max_entities=5)
    assert [(m.key, m.name, m.type) for m in ments] == [
        ("ada lovelace", "Ada Lovelace", "person"),
        ("analytical engine", "Analytical Engine", "thing"),
    ]
    assert rels == [
        {
            "src": "ada lovelace",
            "dst": "analytical engine",
            "type": "wrote_notes_on",
            "evidence": "",
        }
    ]


def test_tag_rows_keep_only_known_classes():
    tags = ChunkTags.model_validate(
        {"tags": {"Person": ["Ada Lovelace", "ada lovelace"], "colour": ["red"]}}
    )
    rows = tag_rows(tags, [{"name": "person"}], "c", "chunk1")
    assert [(r["class"], r["name"]) for r in rows] == [("person", "Ada Lovelace")]


def test_parse_steps():
    s = Settings()
    assert parse_steps("tags,atomic", s) == ["atomic", "tags"]
    assert parse_steps(None, s) == ["atomic", "entities", "tags"]
    with pytest.raises(ConfigError):
        parse_steps("atoms", s)


SENTENCES = [f"Sentence number {i} talks about topic {i // 3}." for i in range(12)]


def _resplit_responder(body):
    user = body["messages"][-1]["content"]
    system = body["messages"][0]["content"]
    if "split documents" in system:
        lines = [ln for ln in user.splitlines() if ln[:1].isdigit() and ": " in ln]
        # end the chunk at the last line of the first topic seen in the window
        first_topic = lines[0].rsplit(" ", 1)[-1]
        end = max(i + 1 for i, ln in enumerate(lines) if ln.endswith(first_topic))
        return json.dumps(
            {
                "reasoning": "topic change",
                "end_line": end,
                "summary_first": f"about topic {first_topic}",
                "summary_second": "the rest",
            }
        )
    return json.dumps({"summary": "summary"})


def test_forward_summary_chunker_follows_llm_cuts_and_loses_no_text(tmp_path):
    units = make_units(SENTENCES)
    per = units[0].tokens
    with FakeOpenAI(_resplit_responder) as server:
        llm = get_llm(llm_settings_for(server, tmp_path))
        chunker = ForwardSummaryChunker(llm, budget=per * 8)  # base = 4 sentences
        groups = chunker.chunk(units)
        llm.close()
    assert [u for g in groups for u in g] == units  # nothing lost or moved
    assert [[u.index for u in g] for g in groups] == [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [9, 10, 11],
    ]  # cut at topic changes
    assert chunker.summaries[0] == "about topic 0." and chunker.summaries[3] == "about topic 1."
    assert chunker.fallbacks == 0


def test_forward_summary_chunker_falls_back_on_bad_replies(tmp_path):
    units = make_units(SENTENCES[:8])
    per = units[0].tokens
    with FakeOpenAI(lambda b: Status(400)) as server:
        llm = get_llm(llm_settings_for(server, tmp_path))
        chunker = ForwardSummaryChunker(llm, budget=per * 8)
        groups = chunker.chunk(units)
        llm.close()
    assert [u for g in groups for u in g] == units
    assert chunker.fallbacks >= 1 and all(len(g) <= 4 for g in groups)  # fixed base chunks


def test_forward_summary_needs_an_llm():
    with pytest.raises(LLMNotConfigured):
        ForwardSummaryChunker(None, budget=128)
