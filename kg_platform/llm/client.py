"""The one LLM client: any OpenAI-compatible chat endpoint (OpenAI, Azure's v1 endpoint, vLLM,
Ollama, llama.cpp server) through the ``openai`` package.

What it adds on top of ``openai``: retries with exponential backoff on 429/5xx/timeouts that
honour ``Retry-After`` (capped), a process-wide concurrency limit, an on-disk response cache keyed
by model + messages + parameters, token and cost accounting per call (server-reported usage, or
offline cl100k counts when the server reports none), and structured outputs validated against
each prompt's pydantic schema with one repair retry before an :class:`LLMOutputInvalid` is
recorded and raised. The ``openai`` client is built with ``max_retries=0`` so retry policy lives
here, in one place, and tests can make it instant (``sleep=`` seam).
"""

from __future__ import annotations

import contextvars
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from kg_platform.config import LLMSettings, Settings
from kg_platform.errors import LLMError, LLMNotConfigured, LLMOutputInvalid
from kg_platform.llm.cache import ResponseCache, cache_key
from kg_platform.llm.prompts import Prompt, get_prompt
from kg_platform.llm.structured import JSONNotFound, extract_json
from kg_platform.llm.usage import UsageMeter, active_meters, cost_of, metering

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


@dataclass
class LLMResult:
    """One chat reply. Token counts are the server's when it reports usage, else cl100k counts."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    cost_usd: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    key: str = ""  # the response-cache key of this request


def _count_message_tokens(messages: Sequence[dict[str, Any]]) -> int:
    from kg_platform.tokens import count_tokens

    # 4 tokens of chat framing per message plus 3 for the reply primer (OpenAI's cookbook rule).
    return sum(4 + count_tokens(str(m.get("content") or "")) for m in messages) + 3


class LLMClient:
    """Chat and structured calls against one model. Thread-safe; share one per process."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        cache_dir: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
        openai_client: Any = None,
    ) -> None:
        if not settings.configured:
            raise LLMNotConfigured(
                "no LLM is configured",
                hint="set KGP_LLM__BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) and "
                "KGP_LLM__MODEL, plus KGP_LLM__API_KEY for hosted APIs",
            )
        self.settings = settings
        self.model: str = settings.model or ""
        self._sleep = sleep
        self._sem = threading.BoundedSemaphore(max(1, settings.concurrency))
        self.usage = UsageMeter()
        self.cache: ResponseCache | None = (
            ResponseCache(Path(cache_dir) / "responses.sqlite")
            if settings.cache and cache_dir is not None
            else None
        )
        self._token_param = "max_tokens"
        if openai_client is None:
            import openai

            key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
            openai_client = openai.OpenAI(
                base_url=settings.base_url, api_key=key, timeout=settings.timeout_s, max_retries=0
            )
        self._openai = openai_client

    # ------------------------------------------------------------------ metering
    def meter(self) -> Any:
        """``with llm.meter() as m:`` sums every call made in this context (run or question)."""
        return metering()

    # ------------------------------------------------------------------ chat
    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
        prompt_name: str | None = None,
        use_cache: bool = True,
    ) -> LLMResult:
        """One chat completion (from the cache when the same request was answered before)."""
        temp = self.settings.temperature if temperature is None else temperature
        mtok = self.settings.max_tokens if max_tokens is None else max_tokens
        params = {"temperature": temp, "max_tokens": mtok, "stop": stop or None}
        key = cache_key(self.model, messages, params)
        if self.cache is not None and use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                text, pt, ct = hit
                self._record(pt, ct, cached=True, prompt_name=prompt_name)
                return LLMResult(text, pt, ct, cached=True, model=self.model, key=key)
        with self._sem:
            resp = self._call_with_retries(messages, temp, mtok, stop)
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        text = (choice.message.content if choice is not None and choice.message else "") or ""
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0
        ct = int(getattr(usage, "completion_tokens", 0) or 0) if usage else 0
        if not usage or (pt == 0 and ct == 0):
            from kg_platform.tokens import count_tokens

            pt, ct = _count_message_tokens(messages), count_tokens(text)
        cost = self._record(pt, ct, cached=False, prompt_name=prompt_name)
        if self.cache is not None:
            self.cache.put(key, self.model, text, pt, ct)
        return LLMResult(
            text,
            pt,
            ct,
            cached=False,
            cost_usd=cost,
            model=self.model,
            finish_reason=getattr(choice, "finish_reason", None),
            key=key,
        )

    def _record(self, pt: int, ct: int, *, cached: bool, prompt_name: str | None) -> float:
        cost = (
            0.0
            if cached
            else cost_of(
                pt, ct, self.settings.price_input_per_1m, self.settings.price_output_per_1m
            )
        )
        for meter in (self.usage, *active_meters()):
            meter.record(
                prompt_tokens=pt,
                completion_tokens=ct,
                cached=cached,
                cost_usd=cost,
                prompt_name=prompt_name,
            )
        return cost

    def _call_with_retries(
        self,
        messages: list[dict[str, Any]],
        temperature: float,
        max_tokens: int,
        stop: list[str] | None,
    ) -> Any:
        import openai

        attempts = max(0, self.settings.max_retries) + 1
        for attempt in range(attempts):
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": temperature,
                self._token_param: max_tokens,
            }
            if stop:
                kwargs["stop"] = stop
            try:
                return self._openai.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if (
                    status == 400
                    and "max_completion_tokens" in str(exc)
                    and self._token_param == "max_tokens"
                ):
                    self._token_param = "max_completion_tokens"  # newer OpenAI models
                    continue
                if status not in _RETRY_STATUS:
                    raise _status_error(exc, self.settings) from exc
                retry_after = _retry_after(exc)
                error: Exception = exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                retry_after, error = None, exc
            except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
                retry_after, error = None, exc  # a garbled body: treat as transient
            if attempt + 1 >= attempts:
                raise LLMError(
                    f"LLM endpoint {self.settings.base_url or 'api.openai.com'} failed after "
                    f"{attempts} attempts: {error}",
                    hint="check the server (`kgp llm check`), or raise KGP_LLM__MAX_RETRIES / "
                    "lower KGP_LLM__CONCURRENCY for rate limits",
                ) from error
            delay = self._backoff(attempt, retry_after)
            log.warning(
                "LLM call failed (%s); retry %d/%d in %.1fs",
                type(error).__name__,
                attempt + 1,
                attempts - 1,
                delay,
            )
            for meter in (self.usage, *active_meters()):
                meter.record_retry()
            self._sleep(delay)
        raise LLMError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cap = self.settings.retry_max_s
        if retry_after is not None:
            return max(0.0, min(retry_after, cap))
        base = self.settings.retry_base_s * (2**attempt)
        return min(cap, base * (1.0 + 0.25 * random.random()))

    # ------------------------------------------------------------------ structured
    def structured(
        self,
        prompt_name: str,
        variables: dict[str, Any],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> BaseModel:
        """Render the named prompt, call, and return its validated pydantic output.

        An unparsable or invalid reply gets one repair request (the reply and the error are
        shown to the model); if that is invalid too, the failure is recorded in the cache's
        failure log and on the usage meters, both replies are dropped from the response cache
        (a re-run asks again instead of replaying them), and :class:`LLMOutputInvalid` is
        raised.
        """
        prompt = get_prompt(prompt_name)
        messages = prompt.render(variables)
        temp = prompt.temperature if temperature is None else temperature
        mtok = prompt.max_tokens if max_tokens is None else max_tokens
        res = self.chat(messages, temperature=temp, max_tokens=mtok, prompt_name=prompt.key)
        try:
            return parse_reply(prompt, res.text)
        except (JSONNotFound, ValidationError, ValueError, TypeError) as exc:
            first_error = _short_error(exc)
        repair = messages + [
            {"role": "assistant", "content": res.text},
            {"role": "user", "content": _repair_instruction(prompt, first_error)},
        ]
        res2 = self.chat(
            repair, temperature=0.0, max_tokens=mtok, prompt_name=f"{prompt.key}#repair"
        )
        try:
            return parse_reply(prompt, res2.text)
        except (JSONNotFound, ValidationError, ValueError, TypeError) as exc:
            error = _short_error(exc)
            for meter in (self.usage, *active_meters()):
                meter.record_invalid()
            if self.cache is not None:
                self.cache.record_failure(prompt.name, prompt.version, self.model, error, res2.text)
                # a cached bad reply would be replayed by every re-run and the chunk could
                # never be distilled: forget both, so `kgp distill` again asks the model
                for bad in (res, res2):
                    self.cache.delete(bad.key)
            raise LLMOutputInvalid(
                f"prompt {prompt.key}: reply still invalid after one repair ({error}); "
                f"reply began {res2.text[:120]!r}",
                hint="a stronger model or a lower temperature helps; failures are logged in "
                "the LLM cache (`kgp llm check --failures`)",
            ) from exc

    def map_structured(
        self,
        prompt_name: str,
        variables: Sequence[dict[str, Any]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        return_exceptions: bool = True,
    ) -> list[BaseModel | LLMError]:
        """``structured`` over many inputs on ``concurrency`` threads, results in input order.

        With ``return_exceptions`` an :class:`LLMError` takes the place of a failed item, so a
        distillation run records it and goes on.
        """

        def one(v: dict[str, Any]) -> BaseModel | LLMError:
            try:
                return self.structured(
                    prompt_name, v, temperature=temperature, max_tokens=max_tokens
                )
            except LLMError as exc:
                if not return_exceptions:
                    raise
                return exc

        if len(variables) <= 1 or self.settings.concurrency <= 1:
            return [one(v) for v in variables]
        with ThreadPoolExecutor(
            max_workers=self.settings.concurrency, thread_name_prefix="kgp-llm"
        ) as pool:
            futures = [pool.submit(contextvars.copy_context().run, one, v) for v in variables]
            return [f.result() for f in futures]

    # ------------------------------------------------------------------ misc
    def check(self) -> dict[str, Any]:
        """A tiny uncached call: is the endpoint there, and how fast does it answer?"""
        t0 = time.perf_counter()
        res = self.chat(
            [{"role": "user", "content": "Reply with the word: ok"}],
            temperature=0.0,
            max_tokens=8,
            use_cache=False,
            prompt_name="check",
        )
        return {
            "model": self.model,
            "base_url": self.settings.base_url,
            "reply": res.text,
            "latency_s": round(time.perf_counter() - t0, 3),
            "prompt_tokens": res.prompt_tokens,
            "completion_tokens": res.completion_tokens,
        }

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        close = getattr(self._openai, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_reply(prompt: Prompt, text: str) -> BaseModel:
    """Reply text -> the prompt's schema (JSON extraction, or the prompt's own parser)."""
    if prompt.parser is not None:
        try:
            value: Any = prompt.parser(text)
        except ValueError:
            value = extract_json(text)  # a model may answer in JSON anyway
    else:
        value = extract_json(text)
    if isinstance(value, list):
        if prompt.list_field is None:
            raise ValueError("expected a JSON object, got a list")
        value = {prompt.list_field: value}
    return prompt.schema.model_validate(value)


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errs = exc.errors()[:3]
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in errs
        )
    return str(exc)[:300]


def _repair_instruction(prompt: Prompt, error: str) -> str:
    if prompt.parser is not None:
        return (
            f"That reply could not be used: {error}. Reply again in exactly the format "
            "asked for above, and nothing else."
        )
    schema = json.dumps(prompt.schema.model_json_schema(), separators=(",", ":"))
    return (
        f"That reply could not be used: {error}. Reply again with only one JSON object "
        f"that matches this JSON schema, no prose and no code fences:\n{schema}"
    )


def _retry_after(exc: Any) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if not headers:
        return None
    for name in ("retry-after-ms", "retry-after"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        return value / 1000.0 if name.endswith("-ms") else value
    return None


def _status_error(exc: Any, settings: LLMSettings) -> LLMError:
    status = exc.status_code
    where = settings.base_url or "api.openai.com"
    if status in (401, 403):
        return LLMError(
            f"LLM endpoint {where} refused the credentials ({status})",
            hint="set KGP_LLM__API_KEY to a valid key for this endpoint",
        )
    if status == 404:
        return LLMError(
            f"LLM endpoint {where} has no model {settings.model!r} or no "
            f"chat-completions route ({status})",
            hint="check KGP_LLM__MODEL and that KGP_LLM__BASE_URL ends in /v1",
        )
    return LLMError(
        f"LLM endpoint {where} rejected the request ({status}): {exc}",
        hint="check the model's limits (context length, max tokens)",
    )


def get_llm(settings: Settings) -> LLMClient | None:
    """The configured client, or None when no LLM is configured (callers degrade gracefully)."""
    if not settings.llm.configured:
        return None
    return LLMClient(settings.llm, cache_dir=Path(settings.cache_dir) / "llm")
