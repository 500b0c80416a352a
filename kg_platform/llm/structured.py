"""Getting a JSON value out of an LLM reply.

Small and local models wrap JSON in prose or Markdown fences, add trailing commas, or stop
mid-object when they hit the token cap. :func:`extract_json` takes the first balanced JSON value
(object or array) it finds, after a few forgiving clean-ups; validation against the prompt's
pydantic schema happens in the client, which asks once for a repair before giving up.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class JSONNotFound(ValueError):
    """No JSON value could be read from the reply."""


def _balanced_spans(text: str) -> list[str]:
    """Every top-level balanced {...} or [...] span, in order (string-aware)."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_str = False
    esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth > 0:
            depth -= 1
            if depth == 0 and start >= 0:
                spans.append(text[start : i + 1])
                start = -1
    return spans


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", candidate))


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``; raises :class:`JSONNotFound`."""
    candidates: list[str] = []
    candidates.extend(m.group(1).strip() for m in _FENCE.finditer(text))
    candidates.append(text.strip())
    for chunk in list(candidates):
        candidates.extend(_balanced_spans(chunk))
    last_error = "empty reply"
    for cand in candidates:
        if not cand:
            continue
        try:
            value = _loads(cand)
        except json.JSONDecodeError as exc:
            last_error = str(exc)
            continue
        if isinstance(value, (dict, list)):
            return value
    raise JSONNotFound(f"no JSON object in the reply ({last_error})")
