from django.contrib import admin
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, include, path, re_path, resolve
from django.views import defaults
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from caselibrary.views import CaseViewSet
from config import errors
from config.api import MESSAGES
from config.middleware import api_error
from diagnosis import otlp_wire
from diagnosis.https_required import OTLP_TRACES_PATH
from diagnosis.otlp_views import otlp_not_found, traces_view
from diagnosis.views import SessionViewSet
from feedback.attribution import attribution_view
from feedback.export_views import export_view
from feedback.overview import overview_view
from feedback.views import FeedbackViewSet

router = SimpleRouter(trailing_slash=False)
router.register("sessions", SessionViewSet, basename="session")
router.register("cases", CaseViewSet, basename="case")
router.register("feedback", FeedbackViewSet, basename="feedback")

urlpatterns = [
    path(
        "admin/overview/attribution/",
        admin.site.admin_view(attribution_view),
        name="admin-attribution",
    ),
    path("admin/overview/", admin.site.admin_view(overview_view), name="admin-overview"),
    path(
        "admin/export/<str:name>.<str:fmt>",
        admin.site.admin_view(export_view),
        name="admin-export",
    ),
    path("admin/", admin.site.urls),
    # The language switcher in the admin header posts to set_language here.
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("evaluation.health")),
    path("api/schema", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include(router.urls)),
    # OTLP/HTTP trace ingest, at the path exporters append to their endpoint.
    path("v1/traces", traces_view, name="otlp-traces"),
    # An exporter pointed at the service's base URL sends metrics and logs here too, and
    # some add a slash: an OTLP 404 in the request's encoding, not Django's HTML page.
    path("v1/traces/", otlp_not_found, name="otlp-not-found"),
    re_path(r"^v1/(?:metrics|logs)/?$", otlp_not_found, name="otlp-other-signals"),
    # Any other /api/ path: the API's JSON 404, also when DEBUG would show its own page.
    # Its name is the route label /metrics gives every path no endpoint serves.
    re_path(r"^api(?:/|$)", errors.api_not_found, name="unmatched"),
]


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 (a Host header not in ALLOWED_HOSTS, too many fields, a body over its
    limits) in the error shape of the machine endpoints: the API's JSON
    (config.middleware.api_error), a google.rpc.Status in the request's encoding on
    /v1/traces; Django's page elsewhere. Here, not in config.errors, because only this
    module may read the OTLP wire format (the app layers). Django has logged the refusal
    (config.logging.ClientErrorFilter)."""
    code = "disallowed_host" if isinstance(exception, DisallowedHost) else "bad_request"
    message = MESSAGES[code]
    if request.path.rstrip("/") == OTLP_TRACES_PATH:
        return _otlp_error(request, 400, message)
    if request.path == "/api" or request.path.startswith("/api/"):
        return api_error(request, 400, code, message)
    return defaults.bad_request(request, exception)


# The routes of the OTLP paths (above): each answers in OTLP's shape.
_OTLP_ROUTES = frozenset({"otlp-traces", "otlp-not-found", "otlp-other-signals"})


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 404, for a path no route serves (config.errors.not_found: JSON for an API
    path); OTLP's, in the request's encoding, for a path that is an OTLP path once its
    repeated slashes are collapsed (//v1/traces, /v1//traces), where an exporter reads a
    google.rpc.Status."""
    collapsed = errors.collapsed(request.path)
    if collapsed != request.path and _otlp_route(collapsed):
        return _otlp_error(
            request, 404, f"OTLP trace 的地址是 {OTLP_TRACES_PATH}（路径中不能有连续的斜杠）"
        )
    return errors.not_found(request, exception)


def _otlp_route(path_: str) -> bool:
    try:
        return resolve(path_).url_name in _OTLP_ROUTES
    except Resolver404:
        return False


def _otlp_error(request: HttpRequest, status: int, message: str) -> HttpResponse:
    """A google.rpc.Status in the request's encoding, or JSON when it has none."""
    try:
        encoding = otlp_wire.encoding_of(request.content_type or "")
    except otlp_wire.WireError:
        encoding = None  # answered in JSON, as the view answers it
    body, content_type = otlp_wire.error_body(encoding, status, message)
    return HttpResponse(body, status=status, content_type=content_type)


handler400 = bad_request
handler404 = not_found
handler500 = errors.server_error
