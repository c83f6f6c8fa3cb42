"""Reading admin changelist pages the way an operator reads them."""

import re

from django.http import HttpResponse

_SESSION_ID_CELL = re.compile(r'<th class="field-session_id"><a href="[^"]+">([^<]+)</a>')


def shown_ids(response: HttpResponse) -> list[str]:
    """Session ids in the changelist's rows, top to bottom."""
    return _SESSION_ID_CELL.findall(response.content.decode())


def list_edit_post(rows: list[dict]) -> dict:  # type: ignore[type-arg]
    """A changelist's editable rows as the browser posts them when Save is pressed: each
    row's fields (its primary key included) by name."""
    data: dict = {  # type: ignore[type-arg]
        "form-TOTAL_FORMS": str(len(rows)),
        "form-INITIAL_FORMS": str(len(rows)),
        "form-MIN_NUM_FORMS": "0",
        "form-MAX_NUM_FORMS": "1000",
        "_save": "Save",
    }
    for n, row in enumerate(rows):
        data.update({f"form-{n}-{name}": value for name, value in row.items()})
    return data
