"""Long texts of tool calls cut to a readable excerpt on the admin's pages.

An agent may send anything as a call's query, error, arguments or result: 96 KB queries
in batch after batch made a session's page 112 MB of HTML (each of its first 500 queries
in the table of calls and again in the timeline) and a page of the list of calls 11 MB.
A page shows the first characters of such a text, an ellipsis, and how long it is, with a
link to where it is whole (the call's own page, which shows it once); a short text is
shown as it is. The API hands the texts out whole.
"""

from django.urls import reverse
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

ELLIPSIS = "…"

# How much of a text each place shows: a cell of the session's table of calls, the
# timeline's arguments, result and error, and the list's tooltip.
TABLE_CHARS = 200
TIMELINE_CHARS = 1_000
TOOLTIP_CHARS = 1_000


def cut(text: str | None, limit: int) -> tuple[str, bool]:
    """The first `limit` characters of `text` and an ellipsis, and whether it was cut;
    a text that fits whole ("" for none)."""
    if not text:
        return "", False
    if len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + ELLIPSIS, True


def cut_note(*, shown: int, total: int, url: str | None = None) -> SafeString:
    """Says that a text is cut, and how long it is whole; with `url`, links to where it
    is whole."""
    said = _("the first %(shown)s of %(total)s characters") % {
        "shown": number_format(shown, force_grouping=True),
        "total": number_format(total, force_grouping=True),
    }
    if url is None:
        return format_html('<span class="cut-note">{}</span>', said)
    return format_html(
        '<span class="cut-note">{} · <a href="{}">{}</a></span>',
        said,
        url,
        _("see it whole"),
    )


def whole_text_link(*, total: int, pk: int) -> SafeString:
    """A short link to the call's own page, where its text of `total` characters is
    whole: for a narrow column, under an excerpt that is cut already."""
    return format_html(
        '<a class="cut-note" href="{}" title="{}">{}</a>',
        invocation_url(pk),
        _("see it whole"),
        _("%(total)s characters") % {"total": number_format(total, force_grouping=True)},
    )


def excerpt(text: str | None, limit: int, *, pk: int | None = None) -> SafeString | str:
    """`text` whole when it fits; else its first `limit` characters, an ellipsis and a
    note saying so, linking to the own page of the call `pk` (where it is whole)."""
    shown, was_cut = cut(text, limit)
    if not was_cut:
        return shown
    url = None if pk is None else invocation_url(pk)
    return format_html("{} {}", shown, cut_note(shown=limit, total=len(text or ""), url=url))


def invocation_url(pk: int) -> str:
    """A call's own page: every fact of it, each text whole, once."""
    return reverse("admin:diagnosis_toolinvocation_change", args=[pk])
