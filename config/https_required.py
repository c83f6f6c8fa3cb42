"""Plain HTTP to the API is refused with 403, not redirected to HTTPS.

With SECURE_SSL_REDIRECT on, Django's SecurityMiddleware answers a plain-HTTP request
with a 301 to https://. That suits a browser; for a program it is a silent failure: a
301 is a success to `curl -f` and to OpenTelemetry exporters, a redirected POST loses its
body, and the API key has already crossed in clear. The machine endpoints answer such a
request with 403 in their own error shape instead, whatever the method (their clients are
programs, which show a 403 and would not be helped by being sent on); the admin and the
browser pages under /api/ (the schema and its Swagger page) keep the redirect.

Answered before SecurityMiddleware, these 403s get the headers it gives every answer from
`with_security_headers`, which both middlewares (this one and /v1/traces's) call.
"""

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware
from django.urls import reverse

from config.middleware import api_error

HTTPS_REQUIRED = "https_required"
HTTPS_REQUIRED_MESSAGE = "只接受 HTTPS 请求，请把地址改为 https:// 开头"
# Pages under /api/ that browsers open, which keep the redirect (URL names).
_BROWSER_PAGES = ("api-docs", "schema")


def https_redirect_applies(request: HttpRequest) -> bool:
    """Whether SecurityMiddleware would redirect `request` to HTTPS: SECURE_SSL_REDIRECT
    is on, the request is not secure (is_secure() honours SECURE_PROXY_SSL_HEADER) and no
    SECURE_REDIRECT_EXEMPT pattern matches its path (the test of
    SecurityMiddleware.process_request)."""
    if not settings.SECURE_SSL_REDIRECT or request.is_secure():
        return False
    path = request.path.lstrip("/")
    return not any(re.search(pattern, path) for pattern in settings.SECURE_REDIRECT_EXEMPT)


def with_security_headers(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """`response` with the headers SecurityMiddleware adds to every answer
    (X-Content-Type-Options, Referrer-Policy, Cross-Origin-Opener-Policy), from the same
    settings, for an answer given before it runs. No Strict-Transport-Security: it goes on
    answers over HTTPS only, and these refuse plain HTTP."""
    # SecurityMiddleware's own process_response, built for this answer so that it reads
    # the settings as they are now (as https_redirect_applies does): its rules, not a copy.
    return SecurityMiddleware(lambda request: response).process_response(request, response)


class HttpsRequiredMiddleware:
    """403 `https_required` in the API's error shape (config.middleware.api_error) for a
    plain-HTTP /api or /api/... request SecurityMiddleware would redirect; placed before it.
    The browser pages keep the redirect with a trailing slash and below them as well."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            _under(request.path, "/api")
            and https_redirect_applies(request)
            and not any(_under(request.path, reverse(name)) for name in _BROWSER_PAGES)
        ):
            refusal = api_error(request, 403, HTTPS_REQUIRED, HTTPS_REQUIRED_MESSAGE)
            return with_security_headers(request, refusal)
        return self.get_response(request)


def _under(path: str, prefix: str) -> bool:
    """Whether `path` is `prefix` itself, with a trailing slash or not, or a path below it
    (`/api/docs/x` is under `/api/docs`, `/api/docsx` is not)."""
    return path == prefix or path.startswith(prefix + "/")
