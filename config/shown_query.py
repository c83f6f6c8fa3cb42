"""A request's query string as a log line shows it: the values of the service's own
harmless parameters (`limit`, `status`, …) kept and every other value replaced. A client
may put a token, a key or a signature there (the service reads them from headers only),
and a log is read by more people than the service's secrets are. Used by the access log
(config/gunicorn_logging.py) and by Django's request lines (config/logging.py).

No Django import: gunicorn reads this before Django is set up.
"""

from urllib.parse import parse_qsl, quote

# Query parameters whose values say what was asked and hold nothing secret: the API's
# filters and pages, the admin's list pages.
SHOWN_QUERY_PARAMETERS = frozenset(
    {
        "status",
        "feedback",
        "createdAfter",
        "createdBefore",
        "limit",
        "days",
        "format",
        "p",
        "o",
        "all",
        "lang",
    }
)
HIDDEN = "[redacted]"


def shown_query(query: str) -> str:
    """`query` with the value of each parameter not in SHOWN_QUERY_PARAMETERS replaced."""
    if not query:
        return ""
    pairs = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        kept = value if name in SHOWN_QUERY_PARAMETERS else HIDDEN
        pairs.append(f"{quote(name, safe='')}={quote(kept, safe='[]:')}")
    return "&".join(pairs)


def shown_request(request: object) -> str:
    """A request as Django's own str() writes it, `<WSGIRequest: POST '/path?query'>`, with
    its query string as shown_query() shows it."""
    method = getattr(request, "method", None)
    path = getattr(request, "path", None)
    meta = getattr(request, "META", None)
    if method is None or path is None or not isinstance(meta, dict):
        return str(request)
    query = shown_query(meta.get("QUERY_STRING", ""))
    full = f"{path}?{query}" if query else path
    return f"<{type(request).__name__}: {method} {full!r}>"
