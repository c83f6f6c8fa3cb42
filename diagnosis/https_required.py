"""Plain HTTP to POST /v1/traces is refused with 403, not redirected to HTTPS.

OpenTelemetry exporters take a 301 for a success, so every span sent to an http://
endpoint of a service that redirects to HTTPS was dropped without a word on either side
(config/https_required.py says why the API is answered the same way). The 403 is a
google.rpc.Status in the request's encoding, as every error of the endpoint: exporters do
not retry it, and log its message.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from config.https_required import (
    HTTPS_REQUIRED_MESSAGE,
    https_redirect_applies,
    with_security_headers,
)
from config.logging import note_refusal
from diagnosis import otlp_wire

OTLP_TRACES_PATH = "/v1/traces"


class OtlpHttpsRequiredMiddleware:
    """403 for a plain-HTTP request to /v1/traces (or /v1/traces/) SecurityMiddleware would
    redirect; placed before it, so the answer takes its headers from with_security_headers."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # With a trailing slash too: the 301 it would get is as silent a loss.
        if request.path.rstrip("/") == OTLP_TRACES_PATH and https_redirect_applies(request):
            try:
                encoding = otlp_wire.encoding_of(request.content_type or "")
            except otlp_wire.WireError:
                encoding = None  # answered in JSON, as the view answers it
            body, content_type = otlp_wire.error_body(encoding, 403, HTTPS_REQUIRED_MESSAGE)
            note_refusal(request, HTTPS_REQUIRED_MESSAGE)
            refusal = HttpResponse(body, status=403, content_type=content_type)
            return with_security_headers(request, refusal)
        return self.get_response(request)
