"""The bad-case review's "create a case from the reader's correction" action."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_get, case_id_for_session
from config.admin_site import ModelPages, model_pages
from config.api import DomainError
from diagnosis.text import isolated
from feedback.services import ALREADY_A_CASE, bad_case_case_from_correction

# Cases made from corrections by one action: each is an operator's decision to read.
CASES_PER_ACTION = 100


class ReaderFeedbackMixin:
    """For BadCaseAdmin: the correction action (the readers' words are shown by
    feedback/admin/reader_history.py)."""

    def has_create_case_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("caselibrary.add_caselibrary")

    @admin.action(
        description=_("Create a case from the reader's correction"),
        permissions=["create_case"],
    )
    def create_case_from_correction(self, request: HttpRequest, queryset: QuerySet) -> None:
        made, refused = [], []
        pages = model_pages(request)
        for session_id in queryset.values_list("session_id", flat=True)[:CASES_PER_ACTION]:
            try:
                case = bad_case_case_from_correction(
                    session_id=session_id, created_by=request.user.get_username()
                )
            except ValidationError as exc:
                refused.append(_refusal(exc.messages[0], session_id, pages))
                continue
            except DomainError as exc:  # a session still running, or gone meanwhile
                refused.append(format_html("{} ({})", exc.message, session_id))
                continue
            made.append(case)
            self.log_addition(request, case, [{"added": {}}])
        if made:
            message = ngettext(
                "{count} case created from a correction: {cases}.",
                "{count} cases created from corrections: {cases}.",
                len(made),
            )
            cases = format_html_join(", ", "{}", ((_case_link(case, pages),) for case in made))
            self.message_user(
                request, format_html(message, count=len(made), cases=cases), messages.SUCCESS
            )
        for line in refused:
            self.message_user(request, line, messages.WARNING)


def _case_link(case: CaseLibrary, pages: ModelPages) -> SafeString:
    """The case's title, linked to its page (as the admin's own messages name what they
    added) when it opens to the operator: making cases is not reading them."""
    url = reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
    return format_html("“{}”", pages.link(CaseLibrary, url, isolated(case.title)))


def _refusal(reason: str, session_id: str, pages: ModelPages) -> SafeString:
    """Why a session's correction made no case, with the session; and the case it already
    has, linked, when that is why."""
    case_id = case_id_for_session(session_id=session_id) if reason == str(ALREADY_A_CASE) else None
    if case_id is None:
        return format_html("{} ({})", reason, session_id)
    case = case_get(case_id=case_id)
    return format_html("{} ({}) {}", reason, session_id, _case_link(case, pages))
