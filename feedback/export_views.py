"""The admin's export links: the list as filtered, streamed as CSV or JSON Lines."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.utils import timezone

from caselibrary.models import CaseLibrary
from feedback.exports import EXPORTS, FORMATS, export_lines, export_rows
from feedback.models import BadCase

MODELS = {"cases": CaseLibrary, "bad_cases": BadCase}
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def export_view(request: HttpRequest, name: str, fmt: str) -> StreamingHttpResponse:
    """Staff only (mounted behind admin_view); the changelist's own filters apply."""
    if name not in EXPORTS or fmt not in FORMATS:
        raise Http404("no such export")
    model_admin = admin.site._registry[MODELS[name]]
    if not model_admin.has_view_or_change_permission(request):
        raise PermissionDenied
    changelist = model_admin.get_changelist_instance(request)
    queryset = changelist.get_queryset(request)
    export = EXPORTS[name]
    response = StreamingHttpResponse(
        export_lines(export, export_rows(export, queryset), fmt),
        content_type=CONTENT_TYPES[fmt],
    )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="{name}-{stamp}.{fmt}"'
    return response
