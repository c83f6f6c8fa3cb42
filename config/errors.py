"""Error pages: JSON under /api/ (the API's one error shape), Django's usual pages elsewhere.
A path is the API's when it is once its repeated slashes are collapsed (//api/sessions):
no route serves it, and its client reads JSON all the same."""

import re

from django.http import HttpRequest, HttpResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from config.api import MESSAGES
from config.middleware import api_error


def collapsed(path: str) -> str:
    """`path` with each run of slashes as one slash."""
    return re.sub(r"/{2,}", "/", path)


def _is_api(request: HttpRequest) -> bool:
    path = collapsed(request.path)
    return path == "/api" or path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


# Exempt, or a POST/PUT/DELETE without a CSRF token got Django's HTML 403 page instead:
# the API authenticates by header, and this view answers a 404 and writes nothing.
@csrf_exempt
def api_not_found(request: HttpRequest) -> HttpResponse:
    """Any /api/ path no endpoint serves; routed here so that DEBUG's own page never
    answers the API."""
    return api_error(request, 404, "not_found", MESSAGES["no_such_endpoint"])


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return api_error(request, 500, "server_error", MESSAGES["server_error"])
    return defaults.server_error(request)
