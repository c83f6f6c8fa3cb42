"""The `openai` opinion provider: any OpenAI-compatible chat-completions endpoint.

Pure of Django: the service passes the settings in. The official client does the HTTP
(its timeout and its retries of timeouts, 429 and 5xx); this module builds the prompt and
checks the reply. The reply must be one JSON object with the five factors, each a
boolean with a rationale; anything else (a refusal, a content filter, prose, JSON of
another shape) raises OpinionError and nothing is stored.

`response_format={"type": "json_object"}` rather than a JSON schema: every compatible
server understands it, and the shape is checked here whatever the server promises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import openai

from evaluation.opinion.base import (
    SOURCE_LLM,
    OpinionError,
    OpinionFactor,
    OpinionMalformed,
    OpinionRefused,
    OpinionSubject,
    OpinionUnreachable,
    validate_factors,
)

# Bumped when the prompt changes, so stored opinions say which prompt formed them.
PROMPT_VERSION = "1"
# What is sent: enough to judge an answer, bounded whatever the session holds.
ANSWER_LIMIT = 12_000
QUESTION_LIMIT = 2_000
TOOLS_LIMIT = 40
TOOL_TEXT_LIMIT = 300
# The SDK refuses an empty key; OpenAI-compatible servers on a private network often
# need none.
NO_KEY = "none"
# The HTTP client's errors for a connection that was never made (a refused connection, a
# connect timeout, a name that does not resolve): the request was never sent.
NOT_CONNECTED = frozenset({"ConnectError", "ConnectTimeout"})

SYSTEM_PROMPT = """You review answers an AIOps diagnosis agent gave to operators.
You get the operator's question, the agent's answer, and the facts its tools recorded
(tool name, status, match level, what the tool was asked, its error).
Judge the answer on exactly these five factors, each true or false:
- has_root_cause: the answer states a root cause.
- has_solution: the answer gives a fix, a workaround or a remedy.
- cites_evidence: the answer refers to what the tools found.
- actionable_steps: the answer gives concrete steps or commands an operator can follow.
- hallucination_risk: the answer makes claims (numbers, hosts, error codes, causes) that
  no tool fact supports.
Reply with one JSON object and nothing else:
{"factors": [{"name": "<factor>", "value": true|false, "rationale": "<one short sentence>"}]}
with each of the five factors exactly once."""


@dataclass(frozen=True, slots=True)
class OpenAIConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 15.0
    max_retries: int = 2

    def __repr__(self) -> str:
        # Never show the key, whoever prints the config.
        return (
            f"OpenAIConfig(base_url={self.base_url!r}, model={self.model!r}, "
            f"timeout={self.timeout}, max_retries={self.max_retries})"
        )


class OpenAIProvider:
    """One chat completion per opinion, its JSON reply validated before it is used."""

    source = SOURCE_LLM
    version = PROMPT_VERSION

    def __init__(self, config: OpenAIConfig) -> None:
        self.model = config.model
        self._key = config.api_key
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or NO_KEY,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )

    def form(self, subject: OpinionSubject) -> list[OpinionFactor]:
        try:
            completion = self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": user_message(subject)},
                ],
                response_format={"type": "json_object"},
                temperature=0,
            )
        except openai.APIError as exc:
            # The client's message names the status and the server's error, which a gateway
            # may write with the key it refused in it: the key is taken out, the exception
            # chain too (django-q2 stores a failed task's exception, and logs it).
            said = str(exc).replace(self._key, "***") if self._key else str(exc)
            if never_sent(exc):
                raise OpinionUnreachable(f"{type(exc).__name__}: {said[:300]}") from None
            raise OpinionError(f"{type(exc).__name__}: {said[:300]}") from None
        except ValueError as exc:
            # The client decodes the HTTP body itself; a proxy's HTML page ends here.
            raise OpinionMalformed(f"the endpoint's reply is not JSON: {exc}") from exc
        return factors_from_completion(completion)


def never_sent(exc: openai.APIError) -> bool:
    """Whether the client's last attempt failed before its request left: the connection
    was never made (the client raises its own error from the transport's)."""
    return isinstance(exc, openai.APIConnectionError) and (
        type(exc.__cause__).__name__ in NOT_CONNECTED
    )


def user_message(subject: OpinionSubject) -> str:
    tools = [
        {
            "tool": tool.tool_name[:TOOL_TEXT_LIMIT],
            "status": tool.status,
            "match_level": tool.match_level,
            "asked": tool.query[:TOOL_TEXT_LIMIT],
            "error": tool.error_message[:TOOL_TEXT_LIMIT],
        }
        for tool in list(subject.tools)[:TOOLS_LIMIT]
    ]
    payload = {
        "question": subject.query[:QUESTION_LIMIT],
        "answer": subject.answer[:ANSWER_LIMIT],
        "answer_truncated": len(subject.answer) > ANSWER_LIMIT,
        "tool_facts": tools,
        "tool_facts_total": len(subject.tools),
    }
    return json.dumps(payload, ensure_ascii=False)


def factors_from_completion(completion: object) -> list[OpinionFactor]:
    """The validated factors of a chat completion, or OpinionRefused / OpinionMalformed."""
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise OpinionMalformed("the reply has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise OpinionRefused(f"the model refused: {str(refusal)[:200]}")
    if getattr(choice, "finish_reason", None) == "content_filter":
        raise OpinionRefused("the reply was withheld by a content filter")
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        raise OpinionMalformed("the reply is empty")
    return factors_from_text(content)


def factors_from_text(content: str) -> list[OpinionFactor]:
    try:
        data = json.loads(content)
    except ValueError:
        raise OpinionMalformed(f"the reply is not JSON: {content[:80]!r}") from None
    if not isinstance(data, dict):
        raise OpinionMalformed("the reply is not a JSON object")
    return validate_factors(data.get("factors"))
