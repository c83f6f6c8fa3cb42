"""A session's tool invocations as a read-only table, on the session's page and the bad
case's: the first INVOCATIONS_SHOWN of them, and for a session with more (an agent in a
loop, a long trace: 20,000 calls) how many there are and a link to the list of them all,
a page at a time (diagnosis/admin_invocations.py). A long query or error is cut to its
first TABLE_CHARS characters, with a link to the call's own page, where it is whole
(diagnosis/admin_excerpts.py).

Rendered with `format_html_join`, not as an inline formset: these pages edit nothing, and
the admin's read-only inline builds a form and a field helper per cell (a session of 200
calls: the page took 430 ms, 200 ms of them in the inline's cells)."""

from collections.abc import Sequence

from django.utils import timezone
from django.utils.formats import number_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from diagnosis.admin_excerpts import TABLE_CHARS, excerpt
from diagnosis.admin_invocations import session_invocations_url
from diagnosis.models import InvocationStatus, MatchLevel, ToolInvocation, ToolKind
from diagnosis.selectors import session_invocations

# As many as the session's timeline shows (diagnosis.selectors.TIMELINE_ROWS).
INVOCATIONS_SHOWN = 500

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


def session_invocations_table(*, session_id: str, linked: bool = True) -> SafeString:
    """The session's first calls in the order recorded, and when it has more, how many
    and a link to them all. Two statements at most, whatever the number of calls.
    `linked`: whether the calls' pages open to the operator (they ask for the sessions'
    permission); if not, the table links nowhere."""
    calls = list(session_invocations(session_id=session_id)[: INVOCATIONS_SHOWN + 1])
    if len(calls) <= INVOCATIONS_SHOWN:
        return invocations_table(calls, linked=linked)
    # Counted only when cut short, off the session's entries in the unique (session_id,
    # invocation_id) index.
    total = session_invocations(session_id=session_id).count()
    said = _(
        "The first %(shown)s of %(total)s tool invocations are shown, in the order "
        "they were recorded."
    ) % {
        "shown": number_format(INVOCATIONS_SHOWN, force_grouping=True),
        "total": number_format(total, force_grouping=True),
    }
    if linked:
        note = format_html(
            '<p class="help invocations-cut">{} <a href="{}">{}</a></p>',
            said,
            session_invocations_url(session_id),
            _("See them all, page by page"),
        )
    else:
        note = format_html('<p class="help invocations-cut">{}</p>', said)
    return invocations_table(calls[:INVOCATIONS_SHOWN], note=note, linked=linked)


def invocations_table(
    calls: Sequence[ToolInvocation], *, note: SafeString | str = "", linked: bool = True
) -> SafeString:
    """The calls in the order given; `note`: said under the table; `linked`: whether a
    text cut short links to the call's own page, where it is whole."""
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
                excerpt(call.query, TABLE_CHARS, pk=call.pk if linked else None),
                excerpt(call.error_message, TABLE_CHARS, pk=call.pk if linked else None),
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
    # In a box of its own that scrolls sideways when the table is wider than the page.
    return format_html(
        '<div class="invocations-box"><table class="invocations"><thead><tr>{}</tr></thead>'
        "<tbody>{}</tbody></table></div>{}",
        headers,
        rows,
        note,
    )
