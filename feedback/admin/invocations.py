"""A session's tool invocations as a read-only table: all of them on the session page, the
first ones on the bad-case page.

Rendered with `format_html_join`, not as an inline formset: these pages edit nothing, and
the admin's read-only inline builds a form and a field helper per cell (a session of 200
calls: the page took 430 ms, 200 ms of them in the inline's cells)."""

from collections.abc import Sequence

from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from diagnosis.models import InvocationStatus, MatchLevel, ToolInvocation, ToolKind

# The columns, headed by the fields' own (translated) names. admin.css finds them by
# position (`table.invocations td:nth-child(n)`; the cells stay bare `<td>`s): reorder
# them there too.
COLUMNS = (
    "tool_name",
    "kind",
    "status",
    "match_level",
    "hit_count",
    "query",
    "error_message",
    "duration_ms",
    "created_at",
)


def invocations_table(
    calls: Sequence[ToolInvocation], *, more: tuple[str, str] | None = None
) -> SafeString:
    """The calls in the order given; `more`: a link (url, text) under the table."""
    if not calls:
        return format_html("<em>{}</em>", _("no tool invocations"))
    # Each label translated once, not once a row.
    kinds, statuses, levels = (
        {value: str(label) for value, label in choices.choices}
        for choices in (ToolKind, InvocationStatus, MatchLevel)
    )
    rows = format_html_join(
        "",
        '<tr class="invocation"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                call.tool_name,
                kinds.get(call.kind, call.kind),
                statuses.get(call.status, call.status),
                levels.get(call.match_level, call.match_level) if call.match_level else "-",
                call.hit_count,
                call.query or "",
                call.error_message or "",
                call.duration_ms if call.duration_ms is not None else "-",
                timezone.localtime(call.created_at).strftime("%Y-%m-%d %H:%M:%S"),
            )
            for call in calls
        ),
    )
    headers = format_html_join(
        "",
        "<th>{}</th>",
        ((ToolInvocation._meta.get_field(name).verbose_name,) for name in COLUMNS),
    )
    link = format_html('<p><a href="{}">{}</a></p>', *more) if more else ""
    # In a box of its own that scrolls sideways when the table is wider than the page.
    return format_html(
        '<div class="invocations-box"><table class="invocations"><thead><tr>{}</tr></thead>'
        "<tbody>{}</tbody></table></div>{}",
        headers,
        rows,
        link,
    )
