"""The session timeline on the session's admin page: its spans (OTLP) or its tool
invocations (REST) on one time scale, each expandable to its arguments and result, with
the cases its case-library searches found, and for a span every attribute it came with.
A model call's row names its model and tokens while collapsed.

A span's attributes are read when its row is opened (`span_attributes_html`, the
session admin's `spans/<id>/attributes/`): a model call carries the conversation so far,
up to 16,384 characters an attribute, and 500 of them on the page would be megabytes
nobody opens. For the same reason a row's arguments, result and error show their first
TIMELINE_CHARS characters (diagnosis/admin_excerpts.py), saying where they are whole: a
REST call's own page, or the span's attributes, which then show them whole."""

import heapq
import json
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from caselibrary.models import CaseLibrary
from caselibrary.selectors import session_case_searches
from config.admin_site import model_pages_of
from diagnosis.admin_excerpts import TIMELINE_CHARS, cut_note, invocation_url
from diagnosis.admin_excerpts import cut as cut_to
from diagnosis.models import DiagnosisSession, Span, SpanRole, ToolInvocation
from diagnosis.otlp_facts import HITS_ATTRIBUTE, KIND_ATTRIBUTE, LEVEL_ATTRIBUTE, hint_read
from diagnosis.otlp_mapping import TRUNCATED_ATTRIBUTE
from diagnosis.selectors import (
    TIMELINE_ROWS,
    TimelineRow,
    session_invocations,
    session_timeline,
    session_timeline_size,
)

# A value longer than this, or of more than one line, is folded in a box of its own (as
# the arguments and the result are); shorter ones stay on the key's line.
SHORT_VALUE_CHARS = 120
# A span's attributes shown, the first by key, and the characters of a value (an array's
# JSON; a string is cut at ingest, OTLP_MAX_ATTRIBUTE_CHARS) and of all of them: a span
# stored before the ingest limited them (OTLP_MAX_ATTRIBUTES_PER_SPAN) may hold 900,000,
# or an array of millions of items, and the page stays a few megabytes. A span stored
# since shows whole (1,024 and the keys read), but for more than 4 MB of values.
ATTRIBUTES_SHOWN = 2000
VALUE_SHOWN_CHARS = 16384
PAGE_VALUE_CHARS = 4_000_000


def timeline_html(session: DiagnosisSession) -> SafeString:
    found: dict[str, list[str]] = {}
    for search in session_case_searches(session_id=session.session_id):
        found.setdefault(search.invocation_id, []).extend(search.case_ids or [])
    labels = dict(SpanRole.choices)
    # A found case's id links to its page only for those it opens to.
    cases_open = model_pages_of(session).open(CaseLibrary)
    rows = []
    for row in session_timeline(session_id=session.session_id):
        item = dict(vars(row))
        item["role_label"] = labels.get(row.role, row.role)
        item["cases"] = [
            (
                case_id,
                reverse("admin:caselibrary_caselibrary_change", args=[case_id])
                if cases_open
                else None,
            )
            for case_id in found.get(row.invocation_id or "", [])
        ]
        item["model_call"], item["model_call_title"] = _model_call(row)
        for name in ("arguments", "result", "error_message"):
            item[name], item[f"{name}_note"] = _cut(getattr(row, name), row)
        rows.append(item)
    # A row's attributes are at `<spans_url><span key>/attributes/`: the address is
    # reversed once for the page, not once a row (a quarter of the timeline's time).
    spans_url = reverse(
        "admin:diagnosis_diagnosissession_span_attributes", args=[session.pk, 0]
    ).removesuffix("0/attributes/")
    # A full timeline may be cut short: counted then only, to say how much is left out.
    total = (
        session_timeline_size(session_id=session.session_id)
        if len(rows) >= TIMELINE_ROWS
        else len(rows)
    )
    return render_to_string(
        "admin/diagnosis/timeline.html",
        {"rows": rows, "spans_url": spans_url, "shown": len(rows), "total": total},
    )


def _cut(text: str, row: TimelineRow) -> tuple[str, SafeString | str]:
    """A text of the row as the page shows it, and a note when it is cut: where it is
    whole (a REST call's own page; a span's attributes, read when its row is opened)."""
    shown, was_cut = cut_to(text, TIMELINE_CHARS)
    if not was_cut:
        return shown, ""
    if row.invocation_key is not None:
        url = invocation_url(row.invocation_key)
        return shown, cut_note(shown=TIMELINE_CHARS, total=len(text), url=url)
    note = cut_note(shown=TIMELINE_CHARS, total=len(text))
    if row.span_key is None:
        return shown, note
    return shown, format_html("{} · {}", note, _("whole among the attributes below"))


def _model_call(row: TimelineRow) -> tuple[str, str]:
    """A model call's model and tokens in and out, short for its collapsed row, and the
    same spelt out for its tooltip; empty for other rows and for a call that names none."""
    if row.role != SpanRole.MODEL:
        return "", ""
    short = [row.model] if row.model else []
    title = short.copy()
    for count, brief, spelt_out in (
        (row.input_tokens, _("%(tokens)s in"), _("input tokens: %(tokens)s")),
        (row.output_tokens, _("%(tokens)s out"), _("output tokens: %(tokens)s")),
    ):
        if count is not None:
            short.append(brief % {"tokens": _text(count)})
            title.append(spelt_out % {"tokens": _text(count)})
    return " · ".join(short), ", ".join(title)


def span_attributes_html(span: Span) -> SafeString:
    """Every attribute of the span as a key/value row, sorted by key (the GenAI ones
    together, and alike on every database); a value cut at ingest, or a hint the ingest
    ignored (diagnosis.otlp_facts), marked so. Keys and values are the agent's:
    format_html escapes both."""
    attributes = span.attributes if isinstance(span.attributes, dict) else {}
    if not attributes:
        return format_html("<strong>{}</strong> <em>{}</em>", _("Attributes"), _("none"))
    cut = attributes.get(TRUNCATED_ATTRIBUTE)
    cut = set(cut) if isinstance(cut, list) else set()
    cut_label = _("cut to the limit")
    fact = None
    if span.role == SpanRole.TOOL and any(key in attributes for key in _HINTS):
        fact = session_invocations(session_id=span.session_id).filter(invocation_id=span.span_id)
        fact = fact.first()
    lines = []
    keys = heapq.nsmallest(ATTRIBUTES_SHOWN, attributes)
    room = PAGE_VALUE_CHARS
    for key in keys:
        mark = format_html(' · <span class="cut">{}</span>', cut_label) if key in cut else ""
        if fact is not None and key in _HINTS and not _hint_used(key, attributes[key], fact):
            mark = format_html(
                ' · <span class="ignored">{}</span>',
                _("ignored: the fact holds %(value)s") % {"value": _text(_HINTS[key](fact))},
            )
        text = _text(attributes[key])
        lines.append((key, _value_html(text, span, max(room, SHORT_VALUE_CHARS)), mark))
        room -= len(text)
    more = ""
    if len(attributes) > len(keys):
        more = format_html(
            "<p>{}</p>",
            _("The first %(shown)s of %(total)s attributes, by key.")
            % {
                "shown": number_format(len(keys), force_grouping=True),
                "total": number_format(len(attributes), force_grouping=True),
            },
        )
    return format_html(
        '<strong>{}</strong><table class="attributes"><tbody>{}</tbody></table>{}',
        _("Attributes"),
        format_html_join("", '<tr><th scope="row">{}</th><td>{}{}</td></tr>', lines),
        more,
    )


def _value_html(text: str, span: Span, room: int = VALUE_SHOWN_CHARS) -> SafeString | str:
    """`room`: the characters the page has left for it."""
    if len(text) <= SHORT_VALUE_CHARS and "\n" not in text:
        return text
    limit = min(room, max(VALUE_SHOWN_CHARS, settings.OTLP_MAX_ATTRIBUTE_CHARS))
    if len(text) > limit:
        note = cut_note(shown=limit, total=len(text))
        return format_html('<pre class="value">{}</pre>{}', text[:limit], note)
    # A long value the row shows already (a tool's arguments and result are attributes
    # as sent) is not repeated, unless the row shows it cut: here it is whole.
    if len(text) <= TIMELINE_CHARS:
        if text == span.arguments:
            return format_html('<em class="same">{}</em>', _("the arguments above"))
        if text == span.result:
            return format_html('<em class="same">{}</em>', _("the result above"))
    return format_html('<pre class="value">{}</pre>', text)


# The hints a tool span may carry, and where its fact keeps what was read of each.
_HINTS = {
    KIND_ATTRIBUTE: lambda fact: fact.kind,
    LEVEL_ATTRIBUTE: lambda fact: fact.match_level,
    HITS_ATTRIBUTE: lambda fact: fact.hit_count,
}


def _hint_used(key: str, value: Any, fact: ToolInvocation) -> bool:
    """Whether the stored fact holds the hint as the ingest reads it (otlp_facts): one it
    ignored left the fact derived as if it were absent."""
    read = hint_read(key, value)
    return read is not None and read == _HINTS[key](fact)


def _text(value: Any) -> str:
    """An attribute's value as the agent sent it: a string as it is, anything else (a
    number, a boolean, an array, a kvlist) as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
