"""What gunicorn refuses before Django sees it (a request line over its limit, too many
header fields, a request line it cannot parse, a chunked body it cannot read) is answered
in the API's JSON error shape with gunicorn's status, and logged as gunicorn logs it."""

import json
import socket
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from config.api import error_body
from tests.processes import child_env, gunicorn_with_config

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@dataclass
class Served:
    port: int
    out: Path
    err: Path

    def exchange(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Send `raw` as it is; the status, headers (lower-case names) and body answered."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
            sock.sendall(raw)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split()[1]), headers, body

    def logged(self) -> tuple[list[dict], list[dict]]:
        """The access lines (stdout) and the error log's lines (stderr) so far, parsed."""
        out = [json.loads(line) for line in self.out.read_text().splitlines()]
        err = [json.loads(line) for line in self.err.read_text().splitlines()]
        return out, err


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("gunicorn")
    out, err = tmp / "stdout.log", tmp / "stderr.log"
    env = child_env(DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}")
    env.pop("LOG_FORMAT", None)
    with (
        out.open("w") as stdout,
        err.open("w") as stderr,
        gunicorn_with_config(env, stdout=stdout, stderr=stderr) as (_base, port),
    ):
        yield Served(port, out, err)


def assert_json_error(answer: tuple[int, dict[str, str], bytes], status: int, code: str) -> None:
    got_status, headers, body = answer
    assert got_status == status
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    parsed = json.loads(body)
    # The API's error shape, which holds the feedback contract's (caseId null) as well.
    assert parsed.keys() == {*error_body(code, "").keys(), "caseId"}
    assert (parsed["success"], parsed["code"], parsed["caseId"]) == (False, code, None)
    assert parsed["message"]


def test_a_request_line_of_9000_characters_is_414_in_json(served: Served) -> None:
    answer = served.exchange(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")

    assert_json_error(answer, 414, "uri_too_long")


def test_two_hundred_header_fields_are_431_in_json(served: Served) -> None:
    fields = b"".join(b"X-Field-%d: v\r\n" % n for n in range(200))
    answer = served.exchange(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + fields + b"\r\n")

    assert_json_error(answer, 431, "request_header_fields_too_large")


def test_a_header_field_over_the_size_limit_is_431_in_json(served: Served) -> None:
    big = b"X-Big: " + b"v" * 10_000 + b"\r\n"
    answer = served.exchange(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + big + b"\r\n")

    assert_json_error(answer, 431, "request_header_fields_too_large")


def test_a_malformed_request_line_is_400_in_json(served: Served) -> None:
    answer = served.exchange(b"GET\r\nHost: localhost\r\n\r\n")

    assert_json_error(answer, 400, "bad_request")


def test_a_chunked_body_with_a_bad_chunk_size_is_400_in_json(served: Served) -> None:
    answer = served.exchange(
        b"POST /api/sessions HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\n{}\r\n0\r\n\r\n"
    )

    assert_json_error(answer, 400, "bad_request")


def test_a_feedback_post_the_server_cannot_read_is_answered_in_the_feedback_contracts_shape(
    served: Served,
) -> None:
    answer = served.exchange(
        b"POST /api/feedback HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"ZZZ\r\n{}\r\n0\r\n\r\n"
    )

    status, _headers, body = answer
    assert status == 400
    assert {k: v for k, v in json.loads(body).items() if k != "code"} == {
        "success": False,
        "message": "请求无效",
        "caseId": None,
    }


def test_gunicorn_still_logs_each_refusal_and_the_access_line_of_a_request_it_read(
    served: Served,
) -> None:
    served.exchange(b"GET /" + b"b" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    served.exchange(b"GET\r\nHost: localhost\r\n\r\n")
    served.exchange(
        b"POST /api/cases HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\n{}\r\n0\r\n\r\n"
    )

    access, errors = served.logged()
    refusals = [
        e["message"] for e in errors if e["logger"] == "gunicorn.error" and e["level"] == "WARNING"
    ]
    assert any(
        m.startswith("Invalid request from ip=127.0.0.1: Request Line is too large")
        for m in refusals
    )
    assert "Invalid request from ip=127.0.0.1: Invalid HTTP request line: 'GET'" in refusals
    assert "Invalid request from ip=127.0.0.1: Invalid chunk size: b'zz'" in refusals
    read = [(line["method"], line["path"], line["status"]) for line in access]
    assert ("POST", "/api/cases", 400) in read


def test_ordinary_requests_are_answered_as_before(served: Served) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{served.port}/healthz", timeout=10) as r:
        assert (r.status, json.loads(r.read())) == (200, {"status": "ok"})
        assert r.headers["X-Request-ID"]

    status, _headers, body = served.exchange(
        b"GET /api/no-such-thing HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    assert (status, json.loads(body)["code"]) == (404, "not_found")
