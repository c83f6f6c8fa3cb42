"""Error pages: JSON under /api/, Django's usual pages elsewhere."""

from django.http import HttpRequest, HttpResponse
from django.views import defaults

from config.api import json_error


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def api_not_found(request: HttpRequest) -> HttpResponse:
    return json_error(404, "not_found", "No such endpoint.")


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return json_error(500, "server_error", "Internal error; it has been logged.")
    return defaults.server_error(request)
