"""From a case to the sessions whose searches found it: the case page's hit count links to
the session list, filtered to those sessions (an operator following a stale case to the
answers rated not useful)."""

import re

import pytest

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

SESSIONS = "/admin/diagnosis/diagnosissession/"


def listed(page: str) -> set[str]:
    return set(re.findall(r'<th class="field-session_id"><a href="[^"]+">([^<]+)</a>', page))


def test_the_case_page_links_its_hits_to_the_sessions_that_found_it(admin_client, api) -> None:
    case = CaseLibraryFactory(error_code="ERROR 1205", title="MySQL lock wait timeout")
    other = CaseLibraryFactory(error_code="ORA-00060", title="Oracle deadlock")
    case_index_build()
    for session_id in ("found-1", "found-2", "found-other"):
        DiagnosisSessionFactory(session_id=session_id)
    DiagnosisSessionFactory(session_id="never-searched")
    for session_id in ("found-1", "found-2"):
        api.post(
            "/api/cases/search", {"query": "ERROR 1205", "sessionId": session_id}, format="json"
        )
    api.post("/api/cases/search", {"query": "ORA-00060", "sessionId": "found-other"}, format="json")

    page = admin_client.get(f"/admin/caselibrary/caselibrary/{case.pk}/change/").content.decode()

    link = f"{SESSIONS}?found_case={case.pk}"
    assert f'href="{link}"' in page
    assert listed(admin_client.get(link).content.decode()) == {"found-1", "found-2"}
    other_link = f"{SESSIONS}?found_case={other.pk}"
    assert listed(admin_client.get(other_link).content.decode()) == {"found-other"}


def test_a_case_nobody_found_lists_no_session(admin_client) -> None:
    case = CaseLibraryFactory()
    DiagnosisSessionFactory(session_id="never-searched")

    page = admin_client.get(SESSIONS, {"found_case": case.pk})

    assert page.status_code == 200
    assert listed(page.content.decode()) == set()
