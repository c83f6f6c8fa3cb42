"""The admin's export links: the list as filtered, streamed as CSV or JSON Lines."""

from copy import copy

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import PAGE_VAR
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from caselibrary.models import CaseLibrary
from feedback.exports import EXPORTS, FORMATS, export_lines, export_rows
from feedback.models import BadCase

MODELS = {"cases": CaseLibrary, "bad_cases": BadCase}
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def export_view(request: HttpRequest, name: str, fmt: str) -> HttpResponse:
    """Staff only (mounted behind admin_view); the changelist's own filters apply."""
    if name not in EXPORTS or fmt not in FORMATS:
        raise Http404("no such export")
    model_admin = admin.site.get_model_admin(MODELS[name])
    if not model_admin.has_view_or_change_permission(request):
        raise PermissionDenied
    # The export is every page of the list: the page its link was copied from (which
    # may be gone by now) is no filter.
    request = _with_query(request, _without(request.GET, PAGE_VAR))
    try:
        changelist = model_admin.get_changelist_instance(request)
    except IncorrectLookupParameters:
        # The list page sends such a URL (a stale bookmark, a hand-edited link) to ?e=1;
        # a download, often fetched by a script, is told which parameter is wrong.
        return _refused(_refused_parameters(model_admin, request))
    queryset = changelist.get_queryset(request)
    export = EXPORTS[name]
    response = StreamingHttpResponse(
        export_lines(export, export_rows(export, queryset), fmt),
        content_type=CONTENT_TYPES[fmt],
    )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="{name}-{stamp}.{fmt}"'
    return response


def _without(query: QueryDict, *keys: str) -> QueryDict:
    kept = query.copy()
    for key in keys:
        kept.pop(key, None)
    return kept


def _with_query(request: HttpRequest, query: QueryDict) -> HttpRequest:
    changed = copy(request)
    changed.GET = query
    return changed


def _refused_parameters(model_admin: admin.ModelAdmin, request: HttpRequest) -> list[str]:
    """The query parameters the list refuses, each tried alone; all of them when only
    their combination is refused. Runs only for a refused link."""
    refused = []
    for key in request.GET:
        alone = QueryDict(mutable=True)
        alone.setlist(key, request.GET.getlist(key))
        try:
            model_admin.get_changelist_instance(_with_query(request, alone))
        except IncorrectLookupParameters:
            refused.append(key)
    return refused or list(request.GET)


def _refused(parameters: list[str]) -> HttpResponse:
    message = _("Cannot export: the list does not take this filter or value: %(parameters)s")
    return HttpResponse(
        message % {"parameters": ", ".join(parameters)} + "\n",
        status=400,
        content_type="text/plain; charset=utf-8",
    )
