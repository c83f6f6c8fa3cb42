"""The curation queue: cases still GENERAL, and AUTO cases whose category and error code
the structuring filled in and no operator has changed since. The case list's filter
(`still_general=yes|no`) and the overview's tile count the same cases."""

import re

import pytest
from django.core.cache import cache

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_structuring_accuracy
from caselibrary.services.proposals import cases_structure_new
from feedback.services import feedback_submit
from tests.admin_pages import case_page_post, list_edit_post
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/caselibrary/caselibrary/"
OVERVIEW = "/admin/overview/"


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


def useful_case(session_id: str, query: str) -> CaseLibrary:
    """The case `useful` makes of a session, once the worker's pass has structured it."""
    DiagnosisSessionFactory(succeeded=True, session_id=session_id, query=query, answer="见上")
    case_id = feedback_submit(session_id=session_id, feedback="useful").case_id
    cases_structure_new()
    return CaseLibrary.objects.get(case_id=case_id)


def titles(still_general: str, client) -> list[str]:  # type: ignore[no-untyped-def]
    page = client.get(LIST, {"still_general": still_general}).content.decode()
    return re.findall(r'<th class="field-title"><a href="[^"]+">([^<]+)</a>', page)


def awaiting_in_tile(client) -> int:  # type: ignore[no-untyped-def]
    cache.clear()
    return client.get(OVERVIEW).context["overview"].cases_awaiting_curation


def save_on_the_case_page(client, case: CaseLibrary, **fields: str):  # type: ignore[no-untyped-def]
    response = case_page_post(client, case, **fields)
    assert response.status_code == 302
    return response


@pytest.fixture
def proposed(db) -> CaseLibrary:
    case = useful_case("s-proposed", "ORA-01555 慢查询")
    assert (case.fault_category, case.error_code) == ("DATABASE", "ORA-01555")
    assert (case.source_type, case.updated_by) == ("AUTO", "system")
    return case


def test_a_structured_auto_case_no_operator_saved_awaits_curation(admin_client, proposed) -> None:
    assert titles("yes", admin_client) == [proposed.title]
    assert titles("no", admin_client) == []
    assert awaiting_in_tile(admin_client) == 1


def test_an_operator_edit_on_the_case_page_moves_it_to_curated(admin_client, proposed) -> None:
    assert titles("yes", admin_client) == [proposed.title]

    save_on_the_case_page(admin_client, proposed, title="订单库快照过旧")

    assert titles("yes", admin_client) == []
    assert titles("no", admin_client) == ["订单库快照过旧"]
    assert awaiting_in_tile(admin_client) == 0


def test_an_operator_edit_in_the_list_moves_it_to_curated(admin_client, proposed) -> None:
    assert titles("yes", admin_client) == [proposed.title]
    row = {"case_id": proposed.pk, "fault_category": "DATABASE", "error_code": "ORA-01555 X"}

    admin_client.post(LIST, list_edit_post([row]))

    assert CaseLibrary.objects.get(pk=proposed.pk).updated_by == "admin"
    assert titles("no", admin_client) == [proposed.title]
    assert awaiting_in_tile(admin_client) == 0


def test_the_bulk_category_action_confirms_a_proposed_category(admin_client, proposed) -> None:
    assert titles("yes", admin_client) == [proposed.title]

    admin_client.post(
        LIST,
        {"action": "set_category", "_selected_action": [proposed.pk], "fault_category": "DATABASE"},
    )

    assert CaseLibrary.objects.get(pk=proposed.pk).fault_category == "DATABASE"
    assert titles("no", admin_client) == [proposed.title]
    assert awaiting_in_tile(admin_client) == 0


def test_the_queue_and_the_accuracy_agree_on_what_is_reviewed(admin_client, proposed) -> None:
    other = useful_case("s-other", "ORA-01555 慢查询 again")
    save_on_the_case_page(admin_client, other, fault_category="CAPACITY")

    accuracy = case_structuring_accuracy()

    assert (accuracy.proposed, accuracy.reviewed, accuracy.category_kept) == (2, 1, 0)
    assert titles("yes", admin_client) == [proposed.title]
    assert titles("no", admin_client) == [other.title]


def test_a_general_case_saved_by_an_operator_still_awaits_curation(admin_client) -> None:
    unmatched = useful_case("s-unmatched", "something nobody has a keyword for")
    assert unmatched.fault_category == "GENERAL"

    save_on_the_case_page(admin_client, unmatched, title="Still to file")

    assert CaseLibrary.objects.get(pk=unmatched.pk).updated_by == "admin"
    assert titles("yes", admin_client) == ["Still to file"]
    assert awaiting_in_tile(admin_client) == 1


def test_manual_cases_await_curation_only_in_general(admin_client) -> None:
    for title, category in (("Filed manual", "DATABASE"), ("Unfiled manual", "GENERAL")):
        response = admin_client.post(
            f"{LIST}add/",
            {
                "title": title,
                "fault_category": category,
                "error_code": "",
                "root_cause": "根因",
                "solution": "处理",
            },
        )
        assert response.status_code == 302

    assert set(CaseLibrary.objects.values_list("source_type", flat=True)) == {"MANUAL"}
    assert titles("yes", admin_client) == ["Unfiled manual"]
    assert titles("no", admin_client) == ["Filed manual"]
    assert awaiting_in_tile(admin_client) == 1


def test_an_auto_case_a_person_changed_last_is_curated(admin_client) -> None:
    CaseLibraryFactory(title="Filed auto", source_type="AUTO", fault_category="NETWORK")

    assert titles("no", admin_client) == ["Filed auto"]
    assert awaiting_in_tile(admin_client) == 0


def test_the_filter_and_the_tile_say_what_they_count(admin_client, proposed) -> None:
    page = " ".join(admin_client.get(LIST).content.decode().split())
    overview = " ".join(admin_client.get(OVERVIEW).content.decode().split())

    assert "By awaiting curation" in page
    assert "No: curated by an operator" in page
    assert "still GENERAL" not in page
    assert "still GENERAL, or automatic and not reviewed yet" in overview
    assert 'href="/admin/caselibrary/caselibrary/?still_general=yes"' in overview


def test_saving_a_proposed_case_unchanged_confirms_it_as_curated(admin_client, proposed) -> None:
    save_on_the_case_page(admin_client, proposed)

    assert titles("yes", admin_client) == []
    assert titles("no", admin_client) == [proposed.title]
    case = CaseLibrary.objects.get(pk=proposed.pk)
    assert (case.fault_category, case.error_code, case.updated_by) == (
        "DATABASE",
        "ORA-01555",
        "admin",
    )
    cache.clear()
    assert case_structuring_accuracy().reviewed == 1


def test_saving_a_case_keeps_the_blanks_around_its_answer(admin_client) -> None:
    # An answer opening with an indented block (Markdown code) is stored as sent.
    answer = "    $ df -h /data\n\n根因：磁盘写满。  \n"
    DiagnosisSessionFactory(succeeded=True, session_id="s-indented", query="磁盘满", answer=answer)
    case_id = feedback_submit(session_id="s-indented", feedback="useful").case_id
    case = CaseLibrary.objects.get(case_id=case_id)

    save_on_the_case_page(admin_client, case)

    case.refresh_from_db()
    assert (case.root_cause, case.solution) == (answer, answer)
    history = admin_client.get(f"{LIST}{case.pk}/history/").content.decode()
    assert "Root cause" not in history
