"""One request contract: a typed model per operation, with its limits, used at every door.

Why: the SDK, ``kgp``, the HTTP API, the MCP tools and the LangChain retriever each used to check
(or not check) their arguments in their own way, so an MCP agent could ask for ``k=10**9`` and
get Neo4j's ``OutOfMemoryError`` back while HTTP refused it. Every door now builds the same model
before anything runs, so a limit or an option added here holds everywhere at once:

==========================  =================================================================
field                       bound
==========================  =================================================================
``query`` / ``question``    1..4,000 characters
``k``                       1..200
``max_tokens``              1..100,000 (the token budget; ``ask`` also takes ``context_tokens``)
``level``                   1..6 (MoG level of a source outline's chunks)
``corpus``                  1..200 characters, not blank, no NUL
``scope``                   at most 200 entries, each 1..20,000 characters
``strategy``                a registered strategy (:func:`~.retrieval.base.list_strategies`)
``select`` / ``mode``       their closed sets of choices
``run_id``                  1..200 characters (``cancel_run``)
==========================  =================================================================

Unknown fields are refused (``extra="forbid"``). :meth:`Request.parse` turns every violation into
one :class:`~kg_platform.errors.InvalidRequest` whose message names each field and its bound
(HTTP answers it 422 through FastAPI's own validation of the same models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError
from pydantic.functional_validators import AfterValidator, BeforeValidator
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from kg_platform.corpus_name import MAX_CORPUS_CHARS
from kg_platform.errors import InvalidRequest

__all__ = [
    "MAX_CORPUS_CHARS",
    "MAX_K",
    "MAX_LEVEL",
    "MAX_SCOPE",
    "MAX_SCOPE_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TOKENS",
    "AskRequest",
    "CancelRunRequest",
    "CorporaRequest",
    "ExplainRequest",
    "IngestRequest",
    "Request",
    "SearchRequest",
    "SourceRequest",
    "UploadRequest",
    "describe_errors",
]

MAX_K = 200
MAX_TEXT_CHARS = 4_000
MAX_LEVEL = 6
MAX_TOKENS = 100_000
MAX_SCOPE = 200
#: a scope entry may be a document's title, and titles can be long (a 15,000-character one
#: is a test case): the bound is a size guard, not a style rule
MAX_SCOPE_CHARS = 20_000
MAX_STRATEGY_CHARS = 100
#: `kgp ingest dir/*` passes what the shell expanded: a big folder's files stay under it (the
#: HTTP body limit bounds a request's paths before this does)
MAX_PATHS = 100_000
MAX_PATH_CHARS = 4_096
MAX_PATTERNS = 200
MAX_FILES = 1_000
MAX_FILE_NAME_BYTES = 255
#: a run id (``run-<time>-<hex>``) or a task id is far shorter; the bound is a size guard
MAX_RUN_ID_CHARS = 200

Select = Literal["none", "sage", "late", "auto"]
Mode = Literal["auto", "factual", "decompose"]


def _no_bool(value: Any) -> Any:
    # pydantic reads True as 1; a flag passed where a count belongs is a caller's mistake
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer, not a boolean")
    return value


def _corpus(name: str) -> str:
    if not name.strip():
        raise PydanticCustomError(
            "corpus_empty", "the corpus name is empty (name a corpus, or give none at all)"
        )
    if "\x00" in name:
        raise PydanticCustomError("corpus_nul", "the corpus name contains a NUL character")
    return name


def _strategy(name: str) -> str:
    """A registered strategy name (the lab's peers included when it is installed)."""
    from kg_platform.retrieval.base import list_strategies

    known = list_strategies()
    if name not in known:
        from kg_platform.retrieval.base import _load_builtin

        _load_builtin(rescan=True)  # a plug-in installed since the first scan
        known = list_strategies()
    if name not in known:
        # pre-formatted: a name holding braces must not be read as a template field
        raise PydanticCustomError(
            "unknown_strategy",
            f"unknown strategy {name[:100]!r} (known strategies: {', '.join(known)})".replace(
                "{", "("
            ).replace("}", ")"),
        )
    return name


def _file_name(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1].replace("\x00", "")
    if base in ("", ".", ".."):
        raise PydanticCustomError("file_name", "the file name is empty (name the file)")
    size = len(base.encode("utf-8"))
    if size > MAX_FILE_NAME_BYTES:
        raise PydanticCustomError(
            "file_name_too_long",
            f"the file name has {size} bytes; at most {MAX_FILE_NAME_BYTES} are allowed",
        )
    return name


K = Annotated[int, Field(ge=1, le=MAX_K), BeforeValidator(_no_bool)]
Tokens = Annotated[int, Field(ge=1, le=MAX_TOKENS), BeforeValidator(_no_bool)]
Level = Annotated[int, Field(ge=1, le=MAX_LEVEL), BeforeValidator(_no_bool)]
# no min_length: "" is refused by _corpus, in words that say what an empty name would mean
Corpus = Annotated[str, Field(max_length=MAX_CORPUS_CHARS), AfterValidator(_corpus)]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
ScopeEntry = Annotated[str, Field(min_length=1, max_length=MAX_SCOPE_CHARS)]
Strategy = Annotated[
    str, Field(min_length=1, max_length=MAX_STRATEGY_CHARS), AfterValidator(_strategy)
]
Pattern = Annotated[str, Field(min_length=1, max_length=MAX_SCOPE_CHARS)]

#: each bounded field's limit, as the hint of an :class:`InvalidRequest` lists it
LIMITS = {
    "query": f"1..{MAX_TEXT_CHARS:,} characters",
    "question": f"1..{MAX_TEXT_CHARS:,} characters",
    "k": f"1..{MAX_K}",
    "max_tokens": f"1..{MAX_TOKENS:,}",
    "context_tokens": f"1..{MAX_TOKENS:,}",
    "level": f"1..{MAX_LEVEL}",
    "corpus": f"1..{MAX_CORPUS_CHARS} characters",
    "scope": f"at most {MAX_SCOPE} entries of 1..{MAX_SCOPE_CHARS:,} characters",
    "select": "none | sage | late | auto",
    "mode": "auto | factual | decompose",
    "strategy": "a registered strategy",
    "paths": f"1..{MAX_PATHS} paths",
    "files": f"1..{MAX_FILES} files, names of at most {MAX_FILE_NAME_BYTES} bytes",
    "run_id": f"1..{MAX_RUN_ID_CHARS} characters",
}


class Request(BaseModel):
    """The base of every request model: frozen, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    #: the operation's name in messages ("search", "ask", ...)
    operation: ClassVar[str] = "request"

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Self:
        """The request for ``data``, or one :class:`InvalidRequest` naming every bad field."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise cls.invalid(exc.errors(include_url=False)) from None

    @classmethod
    def of(cls, **fields: Any) -> Self:
        """:meth:`parse` of keyword arguments, those given as None left to their defaults."""
        return cls.parse({k: v for k, v in fields.items() if v is not None})

    @classmethod
    def fields(cls) -> list[str]:
        """The names a caller may send (aliases included)."""
        names: list[str] = []
        for name, info in cls.model_fields.items():
            alias = info.validation_alias
            if isinstance(alias, AliasChoices):
                names.extend(str(c) for c in alias.choices)
            else:
                names.append(name)
        return names

    @classmethod
    def invalid(cls, errors: Sequence[Any]) -> InvalidRequest:
        """The :class:`InvalidRequest` for pydantic's ``errors`` of this model."""
        lines = describe_errors(errors)
        fields = [f"{f} ({LIMITS[f]})" if f in LIMITS else f for f in cls.fields()]
        hint = f"{cls.operation} takes {', '.join(fields) or 'no arguments'}"
        known = [e for e in errors if e.get("type") == "unknown_strategy"]
        if known:
            hint = "name a registered strategy (GET /v1/strategies, KnowledgePlatform.strategies())"
        return InvalidRequest(f"invalid {cls.operation} request: {'; '.join(lines)}", hint=hint)


#: where FastAPI found a field (its loc's first part): not part of the field's name
_PLACES = ("body", "query", "path", "header", "cookie", "form")


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = list(loc)
    if len(parts) > 1 and parts[0] in _PLACES:
        parts = parts[1:]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "request"


def _bound(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_errors(errors: Sequence[Any]) -> list[str]:
    """One line per pydantic error, naming the field and its bound (``k must be at most 200
    (got 1000000000)``); inputs are shortened, so a 100,000-character query is not echoed."""
    lines = []
    for error in errors:
        field = _where(error.get("loc", ()))
        kind = error.get("type", "")
        ctx = error.get("ctx") or {}
        value = error.get("input")
        if kind in ("greater_than_equal", "greater_than"):
            bound = ctx.get("ge", ctx.get("gt"))
            lines.append(f"{field} must be at least {_bound(bound)} (got {_shown(value)})")
        elif kind in ("less_than_equal", "less_than"):
            bound = ctx.get("le", ctx.get("lt"))
            lines.append(f"{field} must be at most {_bound(bound)} (got {_shown(value)})")
        elif kind == "string_too_short":
            n = ctx.get("min_length", 1)
            lines.append(f"{field} must have at least {n} character{'s' if n != 1 else ''}")
        elif kind == "string_too_long":
            got = len(value) if isinstance(value, str) else "more"
            lines.append(
                f"{field} must have at most {ctx.get('max_length'):,} characters (got {got:,})"
                if isinstance(got, int)
                else f"{field} must have at most {ctx.get('max_length')} characters"
            )
        elif kind == "too_short":
            lines.append(f"{field} must have at least {ctx.get('min_length')} entries")
        elif kind == "too_long":
            lines.append(
                f"{field} must have at most {ctx.get('max_length')} entries "
                f"(got {ctx.get('actual_length')})"
            )
        elif kind == "extra_forbidden":
            lines.append(f"{field} is not a field of this request")
        elif kind == "missing":
            lines.append(f"{field} is required")
        elif kind == "literal_error":
            lines.append(f"{field} must be one of {ctx.get('expected')} (got {_shown(value)})")
        else:
            lines.append(f"{field}: {error.get('msg', kind)}")
    return lines


# --------------------------------------------------------------------------- read
class SearchRequest(Request):
    """``search`` / ``retrieve``: the top items for a query."""

    operation: ClassVar[str] = "search"

    query: Text = Field(..., description="the question")
    corpus: Corpus | None = Field(None, description="corpus to search (default: every corpus)")
    k: K | None = Field(
        None, description=f"items to return, 1..{MAX_K} (default: 5, KGP_RETRIEVE__K)"
    )
    max_tokens: Tokens | None = Field(
        None,
        description="a token budget instead of k: the ranking's longest prefix within it",
    )
    strategy: Strategy | None = Field(
        None, description="retrieval strategy (default: the SDK's, KGP_RETRIEVE__STRATEGY)"
    )
    select: Select | None = Field(None, description="none | sage | late | auto (default: auto)")
    scope: Annotated[list[ScopeEntry], Field(max_length=MAX_SCOPE)] | None = Field(
        None, description="only these documents: source ids, titles, paths or file names"
    )
    record: bool = Field(False, description="store the ranking as a (:Trajectory) answer")


class ExplainRequest(SearchRequest):
    """``explain``: a search and how each of its items was found."""

    operation: ClassVar[str] = "explain"

    item_id: Annotated[str, Field(min_length=1, max_length=MAX_SCOPE_CHARS)] | None = Field(
        None, description="explain only this item of the results"
    )


class AskRequest(Request):
    """``ask``: an answer with citations."""

    operation: ClassVar[str] = "ask"

    question: Text = Field(..., description="the question")
    corpus: Corpus | None = Field(
        None, description="corpus to answer from (default: the configured KGP_CORPUS)"
    )
    strategy: Strategy | None = Field(
        None, description="retrieval strategy (default: KGP_REASONING__STRATEGY, else the SDK's)"
    )
    mode: Mode = Field("auto", description="auto (classify the task) | factual | decompose")
    scope: Annotated[list[ScopeEntry], Field(max_length=MAX_SCOPE)] | None = Field(
        None, description="answer from these documents only"
    )
    feedback: bool = Field(False, description="SAGE's self-feedback loop (at most 3 rounds)")
    max_tokens: Tokens | None = Field(
        None,
        validation_alias=AliasChoices("max_tokens", "context_tokens"),
        description="the LLM reads the default path's chunks within this many tokens instead "
        "of SAGE's cut (default: the server's reasoning.context_tokens); also "
        "accepted as context_tokens",
    )


class SourceRequest(Request):
    """``source outline``: one document's sections and chunks."""

    operation: ClassVar[str] = "source"

    source: Annotated[str, Field(min_length=1, max_length=MAX_SCOPE_CHARS)] = Field(
        ..., description="the document: source id, title, path or file name"
    )
    corpus: Corpus | None = Field(None, description="its corpus (default: any corpus)")
    level: Level = Field(1, description=f"MoG level of the chunks listed, 1..{MAX_LEVEL}")


# -------------------------------------------------------------------------- write
class IngestRequest(Request):
    """``ingest`` by path: files or folders on the server's machine."""

    operation: ClassVar[str] = "ingest"

    paths: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]],
        Field(min_length=1, max_length=MAX_PATHS),
    ] = Field(..., description="files or folders on the server")
    corpus: Corpus | None = Field(None, description="target corpus (default: KGP_CORPUS)")
    include: Annotated[list[Pattern], Field(max_length=MAX_PATTERNS)] | None = Field(
        None, description="glob patterns to include"
    )
    exclude: Annotated[list[Pattern], Field(max_length=MAX_PATTERNS)] | None = Field(
        None, description="glob patterns to exclude"
    )


class UploadRequest(Request):
    """``upload``: the form fields of an upload (the files' names and the target corpus)."""

    operation: ClassVar[str] = "upload"

    files: Annotated[
        list[Annotated[str, AfterValidator(_file_name)]],
        Field(min_length=1, max_length=MAX_FILES),
    ] = Field(..., description="the uploaded files' names")
    corpus: Corpus | None = Field(None, description="target corpus (default: KGP_CORPUS)")


# -------------------------------------------------------------------- the others
class CorporaRequest(Request):
    """``list_corpora``: no fields (an argument sent to it is a mistake, refused)."""

    operation: ClassVar[str] = "list_corpora"


class CancelRunRequest(Request):
    """``cancel_run``: one run, by its run id or the task id an ingest or upload returned."""

    operation: ClassVar[str] = "cancel_run"

    run_id: Annotated[str, Field(min_length=1, max_length=MAX_RUN_ID_CHARS)] = Field(
        ..., description="the run id, or the task id an ingest or upload returned"
    )
