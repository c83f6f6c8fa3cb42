"""Reading admin changelist pages the way an operator reads them."""

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import HttpResponse
from django.test import Client

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


def member_of(group: str, username: str | None = None) -> Client:
    """A client logged in as a staff user of one of the staff groups (docs/admin.md);
    the user is `client.user`."""
    user = get_user_model().objects.create_user(username or f"ops.{group}", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    client.user = user  # type: ignore[attr-defined]
    return client


def reviewer_named(username: str):  # type: ignore[no-untyped-def]
    """A colleague in the reviewer group, whom a bad case may be assigned to."""
    user = get_user_model().objects.create_user(username, is_staff=True)
    user.groups.add(Group.objects.get(name="reviewer"))
    return user


def case_page_post(client: Client, case, **fields: str) -> HttpResponse:  # type: ignore[no-untyped-def]
    """Save on a case's page as the browser posts it: a `useful` case's answer is its root
    cause and its solution, shown once (the solution field left empty); `fields` edit."""
    data = {
        "title": case.title,
        "fault_category": case.fault_category,
        "error_code": case.error_code or "",
        "root_cause": case.root_cause,
        "solution": "",
        **fields,
    }
    return client.post(f"/admin/caselibrary/caselibrary/{case.pk}/change/", data)
