"""X-Request-ID: the id a reverse proxy gave the request (nginx's `$request_id`), when it
is sane, else a new one; on every response and on every log line written while the
request is handled (config.logging), so a 500 or 503 a client reports can be found."""

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from config.logging import set_request_id

HEADER = "X-Request-ID"

# What an id from outside may be: short, and nothing a log line or a header could be
# split or spoofed with (spaces, line breaks, quotes, `=`). The OpenAPI schema declares the
# header with it (config.openapi); docs/api.md says it in words.
SANE_ID = r"[A-Za-z0-9._:-]{1,128}"
_SANE = re.compile(SANE_ID)


def request_id_of(request: HttpRequest) -> str:
    """The request's incoming X-Request-ID when sane, else a new uuid4 hex."""
    incoming = request.headers.get(HEADER, "")
    if _SANE.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Names the request (request.request_id, the log lines' `request_id`) and answers
    with X-Request-ID. First in MIDDLEWARE, so every answer carries it: those the probes,
    /metrics and a CORS preflight get from middleware that calls nothing after it, and
    every later one (403 https_required, 413, 503)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request)
        request.request_id = request_id  # type: ignore[attr-defined]
        set_request_id(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response
