"""The bad-case review's view of what readers said (reasons, comments, corrections) and
its "create a case from the correction" action."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from feedback.models import BadCase
from feedback.selectors import feedback_entries_of
from feedback.services import bad_case_case_from_correction

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
                    e.created_at.strftime("%Y-%m-%d %H:%M:%S"),
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
        made, refused = 0, []
        for session_id in queryset.values_list("session_id", flat=True)[:CASES_PER_ACTION]:
            try:
                bad_case_case_from_correction(
                    session_id=session_id, created_by=request.user.get_username()
                )
                made += 1
            except ValidationError as exc:
                refused.append(f"{exc.messages[0]} ({session_id})")
        if made:
            self.message_user(
                request,
                ngettext(
                    "%(count)d case created from a correction.",
                    "%(count)d cases created from corrections.",
                    made,
                )
                % {"count": made},
                messages.SUCCESS,
            )
        for line in refused:
            self.message_user(request, line, messages.WARNING)
