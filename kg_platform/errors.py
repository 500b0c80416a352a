"""The exception tree of kg-platform.

Every error the platform raises on purpose derives from :class:`KGPError`, so callers can catch
one type. Each subclass names the part of the system that failed, and every message says what
the user can do about it::

    KGPError
    ├── ConfigError              settings are missing or contradict each other
    │   ├── CorpusNotFound       a named corpus is not in the graph
    │   └── InvalidRequest       a request's field is missing, unknown or out of its bounds
    ├── Neo4jServerError         the local Neo4j server could not be obtained, started or stopped
    ├── GraphError               talking to Neo4j failed
    │   ├── SchemaError          a migration could not be applied
    │   │   └── VectorDimensionMismatch  an existing vector index has another dimension
    │   └── CypherNotFound       a named statement does not exist in cypher/
    ├── EmbeddingError           the embedding model could not be loaded or used
    ├── ParseError               one input file could not be parsed (reported, batch goes on)
    │   ├── UnsupportedFormat
    │   ├── EncryptedDocument
    │   ├── CorruptDocument
    │   ├── EmptyDocument
    │   ├── NeedsOCR
    │   └── SourceTooLarge   a file or parsed source exceeds the ingestion size limits
    ├── IngestionError           a whole ingestion run failed (not a single file)
    ├── RetrievalError           a strategy is unknown or cannot run on this graph
    ├── LLMError                 the LLM endpoint failed or its output could not be parsed
    │   ├── LLMNotConfigured     a step needs an LLM and none is configured
    │   └── LLMOutputInvalid     structured output still invalid after the repair retry
    ├── EvaluationError          a dataset file is malformed
    └── JobError                 an ingestion job spec is invalid or the job is locked
        └── JobLocked            another process holds the job's lock (Neo4j JobLock)
"""

from __future__ import annotations


class KGPError(Exception):
    """Root of every error raised on purpose by kg-platform."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n  hint: {self.hint}" if self.hint else base


class ConfigError(KGPError):
    """Settings are missing, malformed or contradict each other."""


class CorpusNotFound(ConfigError):
    """A corpus named by the user is not in the graph (no ``Corpus`` node, no source)."""


class InvalidRequest(ConfigError):
    """A request (search, explain, ask, source, ingest, upload) breaks the request contract of
    :mod:`kg_platform.requests`: a field out of its bounds, unknown, missing or of the wrong
    kind. The message names each field and its bound."""


class Neo4jServerError(KGPError):
    """The local Neo4j server could not be downloaded, started, reached or stopped."""


class GraphError(KGPError):
    """A Neo4j operation failed."""


class SchemaError(GraphError):
    """A schema migration could not be applied."""


class VectorDimensionMismatch(SchemaError):
    """An existing vector index was built for embeddings of another dimension."""


class CypherNotFound(GraphError):
    """A named Cypher statement is not present under ``cypher/``."""


class EmbeddingError(KGPError):
    """The embedding model could not be loaded or failed while encoding."""


class ParseError(KGPError):
    """One input file could not be parsed; ingestion reports it and goes on with the batch."""


class UnsupportedFormat(ParseError):
    """No parser handles this file type."""


class EncryptedDocument(ParseError):
    """The document is password protected."""


class CorruptDocument(ParseError):
    """The file is truncated, damaged, or not what its extension says."""


class EmptyDocument(ParseError):
    """The file holds no extractable text."""


class NeedsOCR(ParseError):
    """The document is image-only; OCR is not enabled in this platform."""


class SourceTooLarge(ParseError):
    """A file exceeds ``ingest.max_file_bytes`` or its text ``ingest.max_source_tokens``."""


class IngestionError(KGPError):
    """An ingestion run as a whole could not proceed."""


class RetrievalError(KGPError):
    """A retrieval strategy is unknown or cannot run on the current graph."""


class LLMError(KGPError):
    """The LLM endpoint failed or answered with something unusable."""


class LLMNotConfigured(LLMError):
    """A step needs an LLM but none is configured (set KGP_LLM__BASE_URL / KGP_LLM__MODEL)."""


class LLMOutputInvalid(LLMError):
    """Structured LLM output stayed invalid after the repair retry."""


class EvaluationError(KGPError):
    """An evaluation dataset or option is malformed."""


class JobError(KGPError):
    """An ingestion job spec is invalid, unknown, or already running elsewhere."""


class JobLocked(JobError):
    """The job is already running in another process or on another machine."""
