"""gunicorn's sync worker, answering in JSON what gunicorn refuses before Django sees it.

gunicorn answers some requests itself: a request line over `limit_request_line` (414), too
many or too large header fields (431), a request line, header or chunked body it cannot
parse (400), an error outside the application (500). Its answer is an HTML page
(gunicorn.workers.base.Worker.handle_error), where the service promises a JSON error to
every client. This worker keeps gunicorn's decision (the status for each error, its
WARNING "Invalid request from ip=…" or its traceback, the access line) and sends the
same status as the API's error body instead of the page: `{"success": false, "message":
"…", "code": "…", "caseId": null}` (config.api.error_body, with the feedback contract's
`caseId`: the request's path is not known when its line or headers cannot be read, and a
front end reading `/api/feedback`'s errors finds the shape it was built to), with
`Content-Type: application/json` and `Connection: close`.

config/gunicorn.conf.py names it as `worker_class`. No Django import: gunicorn loads the
worker class before Django is set up.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

# The API's code and message (in Chinese, as config.api.MESSAGES) for each status gunicorn
# answers itself; 400 and 500 are MESSAGES' own "bad_request" and "server_error".
ANSWERS: dict[int, tuple[str, str]] = {
    400: ("bad_request", "请求无效"),
    403: ("forbidden", "请求被拒绝"),
    414: ("uri_too_long", "请求行过长"),
    417: ("expectation_failed", "不支持该 Expect 请求头"),
    431: ("request_header_fields_too_large", "请求头过多或过大"),
    500: ("server_error", "服务内部错误，已记录日志"),
    501: ("not_implemented", "不支持该 Transfer-Encoding"),
}


def error_response(status: int, reason: str) -> bytes:
    """The whole HTTP response for `status`: the API's error body in JSON."""
    code, message = ANSWERS.get(status, ANSWERS[500 if status >= 500 else 400])
    body = json.dumps(
        {"success": False, "message": message, "code": code, "caseId": None}, ensure_ascii=False
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


class _PageKept:
    """Stands for the client's socket while gunicorn's handle_error runs: keeps the page it
    writes (util.write_error: one sendall on a non-blocking socket) instead of sending it,
    so that its status is gunicorn's own, whatever errors its version maps to what."""

    def __init__(self) -> None:
        self.written = b""

    def gettimeout(self) -> float:
        return 0.0

    def setblocking(self, flag: bool) -> None:
        pass

    def sendall(self, data: bytes) -> None:
        self.written += data

    def status(self) -> tuple[int, str]:
        """The status and reason of the page kept ("HTTP/1.1 414 URI Too Long"); a 500
        when none was written, or not one that reads."""
        line = self.written.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isprintable():
            return int(parts[1]), parts[2]
        return 500, HTTPStatus(500).phrase


class JsonErrorSyncWorker(SyncWorker):
    """gunicorn's sync worker whose own error answers are the API's JSON errors."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        # gunicorn's own: the status, the log lines, the access line; never raises.
        page = _PageKept()
        super().handle_error(req, page, addr, exc)
        try:
            util.write_nonblock(client, error_response(*page.status()))
        except Exception:  # the client has gone: nothing to answer, as gunicorn does
            self.log.debug("Failed to send error message.")
