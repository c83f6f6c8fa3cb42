"""A list's `cursor` is opaque: one that this API did not write is a 400 naming the
cursor, on every paginated list, never a 500 from the query it would have gone into."""

import base64
from urllib.parse import quote

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# Each paginated list: the factory of its rows, and the attribute and JSON key of their id.
LISTS = {
    "/api/sessions": (DiagnosisSessionFactory, "session_id", "sessionId"),
    "/api/cases": (CaseLibraryFactory, "case_id", "caseId"),
}


def crafted(payload: bytes) -> str:
    """A cursor as a client could forge one: the paginator's own encoding, any content."""
    return quote(base64.b64encode(payload).decode())


@pytest.mark.parametrize(
    "payload",
    [
        b"p=abc",
        b"p=2026-13-45",
        b"p=9999-12-31 23:59:59",
        b"p=%00",
        b"o=99999999999999999999&p=2026-01-01",
        b"p=",
        b"p=99999999999999999999999",
        b"p=9999-12-31 23:59:59-14:00",
    ],
)
@pytest.mark.parametrize("path", LISTS)
def test_a_crafted_cursor_is_a_400_naming_the_cursor(api, path, payload) -> None:
    factory, _, _ = LISTS[path]
    factory.create_batch(3)

    response = api.get(f"{path}?cursor={crafted(payload)}")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {
        "success": False,
        "message": "请求参数无效",
        "code": "invalid",
        "errors": {"cursor": ["Invalid cursor."]},
    }


@pytest.mark.parametrize("path", LISTS)
def test_a_cursor_from_a_real_page_leads_to_the_rest_of_the_list(api, path) -> None:
    factory, attribute, key = LISTS[path]
    ids = {str(getattr(row, attribute)) for row in factory.create_batch(3)}

    first = api.get(f"{path}?limit=2").json()
    response = api.get(first["next"])

    assert response.status_code == 200
    second = response.json()
    assert second["next"] is None
    pages = [[item[key] for item in page["results"]] for page in (first, second)]
    assert [len(page) for page in pages] == [2, 1]
    assert set(pages[0]) | set(pages[1]) == ids
