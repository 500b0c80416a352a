"""The LLM layer: one OpenAI-compatible client, its prompts, cache and usage accounting.

Public surface::

    llm = get_llm(settings)              # LLMClient, or None when no LLM is configured
    res = llm.chat(messages)             # LLMResult(text, prompt_tokens, completion_tokens, cached)
    out = llm.structured("atomize", {...})   # validated pydantic model (see prompts.PROMPTS)
    with llm.meter() as m: ...           # tokens/cost of everything called in the block
"""

from kg_platform.llm.client import LLMClient, LLMResult, get_llm, parse_reply
from kg_platform.llm.prompts import PROMPTS, Prompt, get_prompt
from kg_platform.llm.usage import UsageMeter, metering

__all__ = [
    "LLMClient",
    "LLMResult",
    "PROMPTS",
    "Prompt",
    "UsageMeter",
    "get_llm",
    "get_prompt",
    "metering",
    "parse_reply",
]
