"""The answer to a request refused for its CSRF token (CSRF_FAILURE_VIEW).

Django's own page styles itself with an inline <style> block, which the service's
Content-Security-Policy refuses, and speaks English whatever the console speaks. Here a
person gets a page of the console (its header, stylesheets and language) that says what
went wrong and what to do; a program gets the API's JSON error. As on Django's page,
Django's reason is shown only when DEBUG is on: it may name the trusted origins.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port, validate_host
from django.middleware.csrf import REASON_BAD_ORIGIN, REASON_NO_REFERER
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from config.middleware import api_error

CODE = "csrf_failed"
# Chinese, as every API error's message is (config/api.py says why).
MESSAGE = "CSRF 校验失败：以会话 Cookie 认证的请求须带 CSRF 令牌（X-CSRFToken 请求头）"
ORIGIN_MESSAGE = "CSRF 校验失败：请求的 Origin 不是本服务的地址，也不在 CSRF_TRUSTED_ORIGINS 中"


def _wants_json(request: HttpRequest) -> bool:
    """An /api/ path, or a client that prefers JSON to HTML. A JSON body tips a bare
    `Accept: */*` (fetch's default) towards JSON; a browser's form names text/html."""
    if request.path == "/api" or request.path.startswith("/api/"):
        return True
    offered = ["text/html", "application/json"]
    if request.content_type == "application/json":
        offered.reverse()
    return request.get_preferred_type(offered) == "application/json"


def _came_from(request: HttpRequest) -> str | None:
    """The page the form was sent from, if it is one of the service's own. A Referer is a
    whole URL: anything else (a path, words) is no page to go back to."""
    referer = request.headers.get("Referer", "")
    if (
        url_has_allowed_host_and_scheme(
            referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
        and urlsplit(referer).netloc
    ):
        return referer
    return None


def _foreign_origin(request: HttpRequest) -> str | None:
    """The Origin of a form refused for it, when it is not the console's own address on
    another scheme or port (a proxy ending TLS, the usual cause) nor a host the service
    serves: then it may be another site's page, which trusting would open the console to."""
    origin = request.headers.get("Origin", "")
    host = urlsplit(origin).hostname or ""
    own = split_domain_port(request.get_host())[0]
    if host == own or validate_host(host, settings.ALLOWED_HOSTS):
        return None
    return origin


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Django's `reason` is one of the REASON_* texts of django.middleware.csrf."""
    # A form refused for its origin is a proxy's address the settings do not name (the
    # usual cause behind TLS termination), which no reload mends, or another site's page:
    # said without the trusted origins, which only DEBUG shows.
    origin_refused = reason.startswith(REASON_BAD_ORIGIN.partition("%s")[0])
    if _wants_json(request):
        message = ORIGIN_MESSAGE if origin_refused else MESSAGE
        message = f"{message}（{reason}）" if settings.DEBUG and reason else message
        return api_error(request, 403, CODE, message)
    came_from = _came_from(request)
    # The console's header, navigation and user tools need the user, whom every request
    # through the middleware has; a view of its own that refuses earlier gets the header.
    if hasattr(request, "user"):
        console = admin.site.each_context(request)
        # As on the login page: no navigation for one who may not use the console.
        console["is_nav_sidebar_enabled"] &= console["has_permission"]
    else:
        console = {"site_header": admin.site.site_header, "site_title": admin.site.site_title}
    context = {
        **console,
        "title": _("Your form could not be sent"),
        "back_url": came_from or reverse("admin:index"),
        "back_text": _("Back to the page you came from") if came_from else _("Back to the console"),
        "no_referer": reason == REASON_NO_REFERER,
        "origin_refused": origin_refused,
        "foreign_origin": _foreign_origin(request) if origin_refused else None,
        "reason": reason if settings.DEBUG else "",
    }
    return render(request, "csrf_failure.html", context, status=403)
