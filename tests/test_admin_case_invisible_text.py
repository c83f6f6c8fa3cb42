"""A case's title, root cause and solution say something: a text of invisible characters
alone (a zero-width space, an ideographic space) is blank in the admin as it is in the API
and the import, and such a case does not reach the searchable library."""

import pytest

from caselibrary.models import CaseLibrary

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/caselibrary/caselibrary/"


@pytest.mark.parametrize("field", ["title", "root_cause", "solution"])
def test_a_case_whose_text_shows_nothing_is_refused(admin_client, field: str) -> None:
    body = {
        "diagnosis": "",
        "title": "Disk full on db-3",
        "fault_category": "GENERAL",
        "error_code": "",
        "root_cause": "binlogs",
        "solution": "purge binlogs",
        field: "\u200b\u3000\u2060",
    }

    response = admin_client.post(f"{LIST}add/", body)

    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not CaseLibrary.objects.exists()
