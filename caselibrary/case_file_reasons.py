"""Why json or csv could not read a case file's line, in the words of a file's reader
(caselibrary/case_files.py tells them after the file and line): each parser's reason we
know is worded for people in the active language, at its column when json gives one; a
reason we do not know is told as the parser words it.
"""

import csv
import json

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# json's reasons (JSONDecodeError.msg), in the words of a file's reader; another one is
# told as json words it.
_JSON_REASONS = {
    "Expecting value": gettext_lazy("expected a value"),
    "Expecting property name enclosed in double quotes": gettext_lazy(
        "expected a name in double quotes"
    ),
    "Expecting ':' delimiter": gettext_lazy("expected ':'"),
    "Expecting ',' delimiter": gettext_lazy("expected ','"),
    # From Python 3.13, at the comma (before, "Expecting property name" or "value").
    "Illegal trailing comma before end of object": gettext_lazy("a ',' with no item after it"),
    "Illegal trailing comma before end of array": gettext_lazy("a ',' with no item after it"),
    "Extra data": gettext_lazy("text after the end of the JSON value"),
    "Unterminated string starting at": gettext_lazy(
        "the string starting here has no closing quote"
    ),
    "Invalid control character at": gettext_lazy(
        "a control character (such as a tab) in a string; write it as \\t"
    ),
    "Invalid \\escape": gettext_lazy(
        "unknown escape after \\ in a string; write a \\ itself as \\\\"
    ),
    "Invalid \\uXXXX escape": gettext_lazy("\\u must be followed by 4 hexadecimal digits"),
}
# csv's reasons with strict=True and the comma dialect (csv.Error's text); another one is
# told as csv words it.
_CSV_REASONS = {
    "',' expected after '\"'": gettext_lazy(
        'a quoted cell has text after its closing quote; a " inside a quoted cell is written ""'
    ),
    # A quote opened in the row and not closed: the rest of the file is its cell.
    "unexpected end of data": gettext_lazy(
        "a quote opened here is not closed before the end of the file"
    ),
}


def json_reason(exc: json.JSONDecodeError) -> str:
    """A line that is not JSON, with its column and why."""
    # A line of JSON Lines is one document: its line is the file's, told before.
    reason = _JSON_REASONS.get(exc.msg, exc.msg)
    return _("not valid JSON (column %(column)d: %(reason)s)") % {
        "column": exc.colno,
        "reason": reason,
    }


def csv_reason(exc: csv.Error) -> str:
    """Why csv stopped reading (a cell over its limit says the limit)."""
    if str(exc).startswith("field larger than field limit"):
        return _("a cell longer than %(limit)d characters; is a quote left open?") % {
            "limit": csv.field_size_limit()
        }
    return str(_CSV_REASONS.get(str(exc), exc))
