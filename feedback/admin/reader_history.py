"""What readers said with their feedback (the `feedback_entry` rows), as a table: shown on
the bad-case page and on the session's page, so a reader's comment and correction stay in
view after a later verdict takes the session out of the bad-case queue."""

from django.contrib import admin
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _

from diagnosis.models import DiagnosisSession
from feedback.selectors import feedback_entries_of


def reader_history_table(*, session_id: str) -> SafeString:
    """The session's reasons, comments and corrections, newest first, every reader's
    text escaped."""
    entries = feedback_entries_of(session_id=session_id)
    if not entries:
        return format_html("<em>{}</em>", _("no reason, comment or correction given"))
    headers = format_html_join(
        "",
        '<th class="{}">{}</th>',
        (
            ("feedback-when", _("when")),
            ("feedback-verdict", _("feedback")),
            ("feedback-reason", _("reason")),
            ("feedback-comment", _("comment")),
            ("feedback-correction", _("correction")),
            ("feedback-channel", _("sent with")),
        ),
    )
    rows = format_html_join(
        "",
        '<tr><td class="feedback-when">{}</td><td class="feedback-verdict">{}</td>'
        '<td class="feedback-reason">{}</td><td class="feedback-comment">{}</td>'
        '<td class="feedback-correction">{}</td><td class="feedback-channel">{}</td></tr>',
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


class ReaderHistoryMixin:
    """The `feedback_history` field of an admin whose objects are sessions."""

    @admin.display(description=_("reasons, comments and corrections"))
    def feedback_history(self, obj: DiagnosisSession) -> SafeString:
        return reader_history_table(session_id=obj.session_id)
