"""The gunicorn worker's own error answers (config/gunicorn_worker.py), read off a socket
pair: gunicorn's status for each error it refuses, the API's JSON error body, and nothing
raised when the client has gone."""

import json
import socket
from collections.abc import Iterator

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger
from gunicorn.http.errors import (
    InvalidChunkSize,
    InvalidRequestLine,
    LimitRequestHeaders,
    LimitRequestLine,
)

from config.api import MESSAGES, error_body
from config.gunicorn_worker import JsonErrorSyncWorker


@pytest.fixture
def worker() -> Iterator[JsonErrorSyncWorker]:
    cfg = Config()
    made = JsonErrorSyncWorker(0, 0, [], None, 30, cfg, Logger(cfg))
    yield made
    made.tmp.close()


def answer_to(worker: JsonErrorSyncWorker, exc: BaseException) -> tuple[str, dict[str, str], dict]:
    """What the worker sends a client for `exc`: status line, headers, parsed body."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        worker.handle_error(None, ours, ("127.0.0.1", 4321), exc)
        ours.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := theirs.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (x.partition(":") for x in lines)}
    assert int(headers["content-length"]) == len(body)
    return status_line, headers, json.loads(body)


@pytest.mark.parametrize(
    ("exc", "status_line", "code"),
    [
        (LimitRequestLine(9000, 4094), "HTTP/1.1 414 URI Too Long", "uri_too_long"),
        (
            LimitRequestHeaders("limit request headers fields"),
            "HTTP/1.1 431 Request Header Fields Too Large",
            "request_header_fields_too_large",
        ),
        (InvalidRequestLine("GET"), "HTTP/1.1 400 Bad Request", "bad_request"),
        (InvalidChunkSize(b"zz"), "HTTP/1.1 400 Bad Request", "bad_request"),
    ],
)
def test_each_request_gunicorn_refuses_is_its_status_with_the_api_error_body(
    worker: JsonErrorSyncWorker, exc: BaseException, status_line: str, code: str
) -> None:
    got_line, headers, body = answer_to(worker, exc)

    assert got_line == status_line
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    # The API's error shape, which holds the feedback contract's (caseId null) as well.
    assert body.keys() == {*error_body(code, "").keys(), "caseId"}
    assert (body["success"], body["code"], body["caseId"]) == (False, code, None)


def test_an_error_outside_the_application_is_a_json_500(worker: JsonErrorSyncWorker) -> None:
    try:
        raise RuntimeError("the worker broke")
    except RuntimeError as exc:
        status_line, headers, body = answer_to(worker, exc)

    assert status_line == "HTTP/1.1 500 Internal Server Error"
    assert headers["content-type"] == "application/json"
    assert body == {**error_body("server_error", MESSAGES["server_error"]), "caseId": None}


def test_a_400_says_what_the_api_says_for_a_request_it_refuses(
    worker: JsonErrorSyncWorker,
) -> None:
    _line, _headers, body = answer_to(worker, InvalidRequestLine("GET"))

    assert body == {**error_body("bad_request", MESSAGES["bad_request"]), "caseId": None}


def test_a_client_that_has_gone_raises_nothing(worker: JsonErrorSyncWorker) -> None:
    ours, theirs = socket.socketpair()
    theirs.close()
    with ours:
        worker.handle_error(None, ours, ("127.0.0.1", 4321), InvalidRequestLine("GET"))
