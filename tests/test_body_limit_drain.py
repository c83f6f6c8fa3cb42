"""A body over the limit is answered 413 in the endpoint's own shape, and the client sees
that answer: the server reads the rest of the body and throws it away before answering,
instead of closing on a client still sending (the kernel then resets the connection: a
client that writes its whole body before reading got a broken pipe, and nginx answered
its HTML 502 in place of the 413, which OTLP exporters retry). What is read so is bounded:
a body declared far larger than the limit is left unread."""

import http.client
import io
import json
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from google.rpc.status_pb2 import Status

from diagnosis.models import ApiKey, DiagnosisSession
from tests.otlp import export, new_span_id, new_trace_id, span
from tests.processes import (
    ROOT,
    child_env,
    free_port,
    gunicorn_command,
    http_ok,
    stop_group,
    wait_for,
)

LIMIT = 4 * 1024 * 1024
OVER = LIMIT + 1
PROTOBUF = "application/x-protobuf"


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)


def sent_whole_then_read(port: int, head: str, body: bytes | Iterator[bytes]) -> Answer:
    """Send the request's head and its whole body, and only then read the answer, as
    urllib and many exporters do. A reset while sending or reading fails the test."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(head.encode("latin-1"))
            for part in [body] if isinstance(body, bytes) else body:
                sock.sendall(part)
            response = http.client.HTTPResponse(sock)
            response.begin()
            return Answer(response.status, response.headers, response.read())
        except OSError as exc:
            pytest.fail(f"the connection was reset instead of answered: {exc!r}")


def head_of(path: str, *, content_type: str, key: str | None = None, length: int | None) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    if key:
        lines.append(f"Authorization: Api-Key {key}")
    lines.append(
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    )
    return "\r\n".join(lines) + "\r\n\r\n"


def chunked(body: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for at in range(0, len(body), size):
        part = body[at : at + size]
        yield f"{len(part):x}\r\n".encode() + part + b"\r\n"
    yield b"0\r\n\r\n"


def key(scope: str) -> str:
    return ApiKey.objects.create_key(name=f"drain-{scope}", scope=scope)[1]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
class TestUnderGunicorn:
    @pytest.fixture
    def port(self) -> Iterator[int]:
        # Every limit at 4 MiB, so a chunked body over it is read in part before the 413.
        env = child_env(
            API_MAX_BODY_BYTES=str(LIMIT),
            OTLP_MAX_BODY_BYTES=str(LIMIT),
            CASE_IMPORT_MAX_BYTES=str(1024 * 1024),
            GUNICORN_ACCESS_LOG="0",
        )
        port = free_port()
        web = subprocess.Popen(
            [*gunicorn_command(port), "--workers", "1"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for(
                lambda: http_ok(f"http://127.0.0.1:{port}/healthz"), timeout=60, what="gunicorn"
            )
            yield port
        finally:
            stop_group(web)

    def test_a_session_body_over_the_limit_sent_whole_gets_the_json_413(self, port) -> None:
        answer = sent_whole_then_read(
            port,
            head_of("/api/sessions", content_type="application/json", key=key("full"), length=OVER),
            b"x" * OVER,
        )

        assert answer.status == 413
        assert answer.json()["code"] == "payload_too_large"
        assert answer.headers["Connection"] == "close"

    def test_spans_over_the_limit_sent_whole_get_the_otlp_413(self, port) -> None:
        answer = sent_whole_then_read(
            port,
            head_of("/v1/traces", content_type=PROTOBUF, key=key("agent"), length=OVER),
            b"x" * OVER,
        )

        assert answer.status == 413
        assert answer.headers["Content-Type"] == PROTOBUF
        status = Status.FromString(answer.body)
        assert status.code == 8  # RESOURCE_EXHAUSTED
        assert str(LIMIT) in status.message
        assert answer.headers["Connection"] == "close"

    def test_a_chunked_body_that_grows_past_the_limit_gets_the_json_413(self, port) -> None:
        answer = sent_whole_then_read(
            port,
            head_of("/api/sessions", content_type="application/json", key=key("full"), length=None),
            chunked(b"x" * (3 * LIMIT)),
        )

        assert answer.status == 413
        assert answer.json()["code"] == "payload_too_large"

    def test_spans_sent_whole_without_a_key_get_the_otlp_401(self, port) -> None:
        # Refused before its body is read: the rest is read all the same before the
        # answer, or the exporter meets a reset (a 502 behind nginx) and retries.
        answer = sent_whole_then_read(
            port, head_of("/v1/traces", content_type=PROTOBUF, length=LIMIT), b"x" * LIMIT
        )

        assert answer.status == 401
        assert answer.headers["Content-Type"] == PROTOBUF

    def test_a_session_body_of_exactly_the_limit_is_still_served(self, port) -> None:
        document = json.dumps({"sessionId": "at-limit", "query": "磁盘满了"}, ensure_ascii=False)
        body = document.encode() + b" " * (LIMIT - len(document.encode()))

        answer = sent_whole_then_read(
            port,
            head_of(
                "/api/sessions", content_type="application/json", key=key("full"), length=LIMIT
            ),
            body,
        )

        assert answer.status == 201, answer.body
        assert DiagnosisSession.objects.filter(session_id="at-limit").exists()

    def test_spans_within_the_limit_are_still_stored(self, port) -> None:
        body = export(
            span(
                "invoke_agent",
                trace_id=new_trace_id(),
                span_id=new_span_id(),
                attributes={
                    "gen_ai.conversation.id": "drain-otlp",
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.input.messages": "磁盘为什么满了？",
                },
            )
        ).SerializeToString()

        answer = sent_whole_then_read(
            port,
            head_of("/v1/traces", content_type=PROTOBUF, key=key("agent"), length=len(body)),
            body,
        )

        assert answer.status == 200, answer.body
        assert DiagnosisSession.objects.filter(session_id="drain-otlp").exists()


# The application as gunicorn calls it, on a body held in memory: what it reads of a body
# over the limit is what is left of the stream.


def application_called(path: str, body: bytes, *, length: int) -> tuple[str, dict, io.BytesIO]:
    """The status and headers the application answers for a POST of `body` declared
    `length` bytes long, under a server that ends the body itself; and the stream."""
    from config.wsgi import application

    stream = io.BytesIO(body)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(length),
        "wsgi.input": stream,
        "wsgi.input_terminated": True,
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
    }
    answered: dict = {}

    def start_response(status: str, headers: list, exc_info: object = None) -> Callable:
        answered.update(status=status, headers=dict(headers))
        return lambda data: None

    b"".join(application(environ, start_response))
    return answered["status"], answered["headers"], stream


def test_a_body_somewhat_over_the_limit_is_read_to_its_end_before_the_413(settings) -> None:
    from config.wsgi import application

    length = 2 * application.limit

    status, headers, stream = application_called("/api/sessions", b"x" * length, length=length)

    assert status.startswith("413")
    assert headers["Connection"] == "close"
    assert stream.tell() == length


def test_a_body_declared_far_over_the_limit_is_left_unread() -> None:
    from config.wsgi import application

    length = 100 * application.limit
    # Only its first KB is sent, none of which is read.
    status, headers, stream = application_called("/api/sessions", b"x" * 1024, length=length)

    assert status.startswith("413")
    assert headers["Connection"] == "close"
    assert stream.tell() == 0
