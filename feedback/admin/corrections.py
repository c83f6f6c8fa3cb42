"""The bad-case review's view of what readers said (reasons, comments, corrections) and
its "create a case from the correction" action."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import linebreaksbr
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_get, case_id_for_session
from feedback.models import BadCase
from feedback.selectors import feedback_entries_of
from feedback.services import ALREADY_A_CASE, bad_case_case_from_correction

# Cases made from corrections by one action: each is an operator's decision to read.
CASES_PER_ACTION = 100


class ReaderFeedbackMixin:
    """For BadCaseAdmin: the `feedback_history` field and the correction action."""

    @admin.display(description=_("reasons, comments and corrections"))
    def feedback_history(self, obj: BadCase) -> SafeString:
        entries = feedback_entries_of(session_id=obj.session_id)
        if not entries:
            return format_html("<em>{}</em>", _("no reason, comment or correction given"))
        headers = format_html_join(
            "",
            "<th>{}</th>",
            (
                (label,)
                for label in (
                    _("when"),
                    _("feedback"),
                    _("reason"),
                    _("comment"),
                    _("correction"),
                    _("sent with"),
                )
            ),
        )
        rows = format_html_join(
            "",
            '<tr><td>{}</td><td>{}</td><td class="feedback-reason">{}</td>'
            '<td class="feedback-comment">{}</td><td class="feedback-correction">{}</td>'
            "<td>{}</td></tr>",
            (
                (
                    localtime(e.created_at).strftime("%Y-%m-%d %H:%M:%S"),
                    e.get_feedback_display(),
                    e.get_reason_display() if e.reason else "-",
                    # With their line breaks, as the answer above is shown; linebreaksbr
                    # escapes the text before it adds the <br>s.
                    linebreaksbr(e.comment) if e.comment else "-",
                    linebreaksbr(e.correction) if e.correction else "-",
                    e.get_channel_display(),
                )
                for e in entries
            ),
        )
        return format_html(
            '<table class="feedback-history"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
            headers,
            rows,
        )

    def has_create_case_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("caselibrary.add_caselibrary")

    @admin.action(
        description=_("Create a case from the reader's correction"),
        permissions=["create_case"],
    )
    def create_case_from_correction(self, request: HttpRequest, queryset: QuerySet) -> None:
        made, refused = [], []
        for session_id in queryset.values_list("session_id", flat=True)[:CASES_PER_ACTION]:
            try:
                case = bad_case_case_from_correction(
                    session_id=session_id, created_by=request.user.get_username()
                )
            except ValidationError as exc:
                refused.append(_refusal(exc.messages[0], session_id))
                continue
            made.append(case)
            self.log_addition(request, case, [{"added": {}}])
        if made:
            message = ngettext(
                "{count} case created from a correction: {cases}.",
                "{count} cases created from corrections: {cases}.",
                len(made),
            )
            cases = format_html_join(", ", "{}", ((_case_link(case),) for case in made))
            self.message_user(
                request, format_html(message, count=len(made), cases=cases), messages.SUCCESS
            )
        for line in refused:
            self.message_user(request, line, messages.WARNING)


def _case_link(case: CaseLibrary) -> SafeString:
    """The case's title, linked to its page (as the admin's own messages name what they
    added)."""
    url = reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
    return format_html('“<a href="{}">{}</a>”', url, case.title)


def _refusal(reason: str, session_id: str) -> SafeString:
    """Why a session's correction made no case, with the session; and the case it already
    has, linked, when that is why."""
    case_id = case_id_for_session(session_id=session_id) if reason == str(ALREADY_A_CASE) else None
    if case_id is None:
        return format_html("{} ({})", reason, session_id)
    return format_html("{} ({}) {}", reason, session_id, _case_link(case_get(case_id=case_id)))
