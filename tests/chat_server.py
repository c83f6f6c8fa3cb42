"""A local HTTP server that speaks the chat-completions protocol, for the opinion tests.

It answers `POST /v1/chat/completions` with whatever its script says next: a valid
opinion, a slow one, 429, 500, a body that is not JSON, a reply that is not an opinion,
a refusal. Every request is recorded (path, headers, JSON body) so a test can check what
the client sent. Started on 127.0.0.1 by the test; nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evaluation.opinion import FACTOR_NAMES

VALID_FACTORS = [
    {"name": name, "value": name != "hallucination_risk", "rationale": f"judged {name}"}
    for name in FACTOR_NAMES
]


def completion(content: str | None, *, refusal: str | None = None, finish: str = "stop") -> dict:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


# What the server can be told to answer: (status, headers, body bytes, delay seconds).
def reply(kind: str) -> tuple[int, dict[str, str], bytes, float]:
    as_json = {"Content-Type": "application/json"}
    # retry-after-ms keeps the client's retries quick in tests.
    quick_retry = {**as_json, "retry-after-ms": "10"}
    if kind == "normal":
        body = completion(json.dumps({"factors": VALID_FACTORS}))
        return 200, as_json, json.dumps(body).encode(), 0
    if kind == "slow":
        body = completion(json.dumps({"factors": VALID_FACTORS}))
        return 200, as_json, json.dumps(body).encode(), 3.0
    if kind == "429":
        error = {"error": {"message": "rate limited", "type": "rate_limit"}}
        return 429, quick_retry, json.dumps(error).encode(), 0
    if kind == "500":
        error = {"error": {"message": "boom", "type": "server_error"}}
        return 500, quick_retry, json.dumps(error).encode(), 0
    if kind == "not-json-body":
        return 200, as_json, b"<html>gateway says hello</html>", 0
    if kind == "prose":
        return 200, as_json, json.dumps(completion("The answer looks fine to me.")).encode(), 0
    if kind == "wrong-shape":
        body = completion(json.dumps({"has_root_cause": True, "has_solution": "yes"}))
        return 200, as_json, json.dumps(body).encode(), 0
    if kind == "string-booleans":
        factors = [{**f, "value": str(f["value"]).lower()} for f in VALID_FACTORS]
        body = completion(json.dumps({"factors": factors}))
        return 200, as_json, json.dumps(body).encode(), 0
    if kind == "empty":
        return 200, as_json, json.dumps(completion("")).encode(), 0
    if kind == "refusal":
        body = completion(None, refusal="I can't help with that.")
        return 200, as_json, json.dumps(body).encode(), 0
    if kind == "content-filter":
        body = completion(None, finish="content_filter")
        return 200, as_json, json.dumps(body).encode(), 0
    raise ValueError(f"unknown reply kind {kind!r}")


# --- An agent's model: tool calls first, then the answer --------------------------------


def tool_calls_completion(calls: list[tuple[str, dict]]) -> dict:
    body = completion(None, finish="tool_calls")
    body["choices"][0]["message"]["tool_calls"] = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }
        for index, (name, arguments) in enumerate(calls)
    ]
    return body


def agent_reply(request: dict, calls: list[tuple[str, dict]], answer: str) -> bytes:
    """What a tool-using model says: every planned tool call at once while the conversation
    has no tool result yet, the answer after (a request without tools gets the answer)."""
    messages = request.get("messages") or []
    answered = any(message.get("role") == "tool" for message in messages)
    if calls and request.get("tools") and not answered:
        return json.dumps(tool_calls_completion(calls), ensure_ascii=False).encode()
    return json.dumps(completion(answer), ensure_ascii=False).encode()


@dataclass
class ChatServer:
    base_url: str
    script: list[str] = field(default_factory=list)
    default: str = "normal"
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Used by the "agent" reply: the tool calls the model asks for, then its answer.
    tool_calls: list[tuple[str, dict]] = field(default_factory=list)
    final_answer: str = "done"

    def answer(self, *kinds: str, then: str | None = None) -> None:
        """Answer the next requests with `kinds`, in order, and `then` after them."""
        self.script[:] = list(kinds)
        if then is not None:
            self.default = then

    def _next(self) -> str:
        return self.script.pop(0) if self.script else self.default


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    state = ChatServer(base_url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with lock:
                state.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": json.loads(raw or b"null"),
                    }
                )
                kind = state._next()
            if kind == "401-echoing-the-key":
                # A gateway that quotes the credential it refused (as some proxies do).
                said = state.requests[-1]["headers"].get("authorization", "")
                error = {"error": {"message": f"Incorrect API key provided: {said}"}}
                body = json.dumps(error).encode()
                status, headers, delay = 401, {"Content-Type": "application/json"}, 0.0
            elif kind == "agent":
                request = state.requests[-1]["body"] or {}
                body = agent_reply(request, state.tool_calls, state.final_answer)
                status, headers, delay = 200, {"Content-Type": "application/json"}, 0.0
            else:
                status, headers, body, delay = reply(kind)
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the slow reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the test reads state.requests

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
