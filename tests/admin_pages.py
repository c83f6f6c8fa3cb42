"""Reading admin changelist pages the way an operator reads them."""

import re

from django.http import HttpResponse

_SESSION_ID_CELL = re.compile(r'<th class="field-session_id"><a href="[^"]+">([^<]+)</a>')


def shown_ids(response: HttpResponse) -> list[str]:
    """Session ids in the changelist's rows, top to bottom."""
    return _SESSION_ID_CELL.findall(response.content.decode())
