"""The pipeline signature (skip-by-hash key) changes with everything the stored vectors depend
on: the embedder's quantisation and where level-1 vectors come from."""

from __future__ import annotations

from kg_platform.config import Settings
from kg_platform.granularity.pieces import PIECE_RULES_VERSION
from kg_platform.ingest.plan import embedder_pipeline, pipeline_signature


def _settings(**ingest) -> Settings:
    """Settings with ``ingest`` over the ingestion tuning (kg_platform.tuning ``ingest``)."""
    return Settings().with_tuning(ingest=ingest)


def test_quantisation_changes_the_signature() -> None:
    s = _settings()
    fp32 = pipeline_signature(s, "all-MiniLM-L6-v2", "none")
    assert pipeline_signature(s, "all-MiniLM-L6-v2", "int8") != fp32
    assert pipeline_signature(s, "all-MiniLM-L6-v2") == fp32  # the default is fp32


def test_level1_vector_source_changes_the_signature() -> None:
    assert pipeline_signature(_settings(level1_vectors="pieces"), "m") != pipeline_signature(
        _settings(level1_vectors="model"), "m"
    )


def test_overlap_does_not_change_the_signature() -> None:
    # the stages' overlap changes timing only, never the stored graph: no re-ingest
    assert pipeline_signature(_settings(pipeline_batches=0), "m") == pipeline_signature(
        _settings(pipeline_batches=2), "m"
    )


def test_defaults_add_only_the_piece_rules_whole_paragraphs_and_late_pieces() -> None:
    # quantisation and level-1 modes add nothing at their defaults (no re-ingest for nothing);
    # the piece rules' version is always recorded, because pieces made by older rules differ,
    # and so are the default whole-paragraph chunking and late piece vectors, which graphs
    # stored before them lack
    # pinned: the string stored graphs are compared with (moving the fitted values out of the
    # settings must not change it, or every corpus would be re-ingested)
    s = _settings()
    assert pipeline_signature(s, "all-MiniLM-L6-v2") == (
        f"v1|fixed|128|5|12|2.0|mean|all-MiniLM-L6-v2|pc={PIECE_RULES_VERSION}|para=keep|pv=late"
    )


def test_an_embedder_without_token_states_records_the_separate_pieces_it_stores() -> None:
    # late chunking needs word-piece states; an embedder without them (the sentence-transformers
    # provider) embeds each piece on its own, and the signature must say what is stored
    class Pooling:
        model_name = "m"
        quantize = "none"

        def embed_tokens(self, texts: list[str]) -> None:  # only its presence is read
            raise NotImplementedError

    class PlainOnly:
        model_name = "m"
        quantize = "none"

    s = _settings()
    assert embedder_pipeline(s, Pooling()).endswith("|pv=late")
    assert "|pv=" not in embedder_pipeline(s, PlainOnly())
    assert embedder_pipeline(s, PlainOnly()) == pipeline_signature(
        _settings(piece_vectors="separate"), "m"
    )


def test_the_parser_version_is_part_of_the_signature_of_parsed_files() -> None:
    # a parser change must re-parse files whose bytes did not change; sources that are not
    # parsed from files (QA passages) pass no version and keep the string they were stored with
    s = _settings()
    plain = pipeline_signature(s, "m")
    assert pipeline_signature(s, "m", parser_version="3") == plain + "|parse=3"
    assert pipeline_signature(s, "m", parser_version="4") != pipeline_signature(
        s, "m", parser_version="3"
    )
    assert pipeline_signature(s, "m", parser_version=None) == plain


def test_the_default_parser_records_the_parsing_version_and_a_callers_parser_its_own() -> None:
    from kg_platform import parsing
    from kg_platform.ingest.files import parser_version

    def bare(path):  # a caller's parser without a version records none
        raise NotImplementedError

    class Versioned:
        version = 7

        def __call__(self, path):
            raise NotImplementedError

    assert parser_version(None) == parsing.PARSER_VERSION
    assert parser_version(bare) is None
    assert parser_version(Versioned()) == "7"
