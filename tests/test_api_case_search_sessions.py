"""POST /api/cases/search recorded as the session's evidence; the searches and sessions it
refuses."""

import pytest

from caselibrary.models import CaseReuse, CaseSearch, CaseSearchHit, SourceType
from diagnosis.models import ToolInvocation
from evaluation.services import session_evaluate
from tests import case_search_library
from tests.case_search_library import URL, search
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
library = case_search_library.library


def test_a_search_with_a_session_is_recorded_as_its_retrieval_fact(api, library) -> None:
    DiagnosisSessionFactory(session_id="s-1")

    body = search(api, query="ERROR 1205 on checkout", sessionId="s-1").json()

    invocation = ToolInvocation.objects.get(session_id="s-1")
    assert body["invocationId"] == invocation.invocation_id
    assert invocation.tool_name == "CaseLibrarySearch"
    assert invocation.kind == "retrieval"
    assert invocation.status == "SUCCESS"
    assert invocation.match_level == "L0"
    assert invocation.hit_count == len(body["hits"])
    assert invocation.query == "ERROR 1205 on checkout"
    assert invocation.duration_ms is not None
    search_row = CaseSearch.objects.get(session_id="s-1")
    assert search_row.case_ids == [hit["caseId"] for hit in body["hits"]]


def test_a_found_case_raises_the_sessions_evidence_score_through_the_rules(api, library) -> None:
    for session_id, query in (("found", "ERROR 1205 again"), ("lost", "ES cluster red")):
        DiagnosisSessionFactory(session_id=session_id)
        search(api, query=query, sessionId=session_id)
        api.post(
            f"/api/sessions/{session_id}/complete",
            {"status": "SUCCESS", "answer": "根因：长事务。"},
            format="json",
        )
        session_evaluate(session_id=session_id)

    found = api.get("/api/sessions/found").json()["selfEvaluation"]
    lost = api.get("/api/sessions/lost").json()["selfEvaluation"]
    assert found["evidence_score"] == 65
    assert [f["name"] for f in found["factors"]] == ["has_successful_tool_call", "l0_exact_match"]
    assert lost["evidence_score"] == 20
    assert [f["name"] for f in lost["factors"]] == [
        "has_successful_tool_call",
        "retrieval_no_hit",
    ]


def test_the_same_question_twice_in_a_session_is_a_repeated_recall(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    first = search(api, query="Kafka consumer lag growing", sessionId="loop").json()
    again = search(api, query="kafka consumer LAG growing?", sessionId="loop").json()
    other = search(api, query="CPU 飙高 Full GC", sessionId="loop").json()

    assert (first["repeat"], again["repeat"], other["repeat"]) == (False, True, False)
    assert again["hits"] == first["hits"]  # answered all the same
    assert api.get("/api/sessions/loop").json()["duplicateRecalls"] == 1
    # Both searches are facts of the session; the rules see them as they are.
    assert ToolInvocation.objects.filter(session_id="loop").count() == 3


def test_other_words_that_find_the_same_cases_are_a_repeated_recall(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    search(api, query="ERROR 1205", sessionId="loop")
    again = search(api, query="error-1205 lock wait", sessionId="loop", limit=1).json()

    assert again["repeat"] is True
    assert api.get("/api/sessions/loop").json()["duplicateRecalls"] == 1


def test_a_repeat_is_not_counted_as_another_hit_of_the_case(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    search(api, query="ERROR 1205", sessionId="loop", limit=1)
    search(api, query="ERROR 1205", sessionId="loop", limit=1)

    reuse = CaseReuse.objects.get(case=library["lock"])
    assert (reuse.l0_hits, reuse.l1_hits) == (1, 0)
    assert reuse.last_hit_at is not None


def test_a_search_without_a_session_records_nothing(api, library) -> None:
    search(api, query="ERROR 1205")

    assert not CaseSearch.objects.exists()
    assert not CaseReuse.objects.exists()
    assert not ToolInvocation.objects.exists()


@pytest.mark.parametrize("status", ["succeeded", "failed"])
def test_a_finished_session_cannot_search_and_nothing_is_recorded(
    api, library, status: str
) -> None:
    DiagnosisSessionFactory(session_id="done", **{status: True})

    response = search(api, query="ERROR 1205", sessionId="done")

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert not ToolInvocation.objects.exists()
    assert not CaseSearch.objects.exists()
    assert not CaseSearchHit.objects.exists()


def test_a_finished_session_is_told_it_can_no_longer_search_the_case_library(api, library) -> None:
    DiagnosisSessionFactory(session_id="done", failed=True)

    response = search(api, query="ERROR 1205", sessionId="done")

    assert response.json()["message"] == (
        '会话 "done" 已是 FAILED 状态，不能再用它检索案例库（检索记作该会话的工具调用）；'
        "不带 sessionId 可以检索而不记录"
    )


def test_an_unknown_session_is_404_and_nothing_is_recorded(api, library) -> None:
    response = search(api, query="ERROR 1205", sessionId="nobody")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nobody" 不存在',
        "code": "not_found",
    }
    assert not CaseSearch.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   \n\t "}, "query"),
        ({"query": " \u200b\ufeff\u2060 "}, "query"),
        ({"query": "x" * 4001}, "query"),
        ({}, "query"),
        ({"query": 42}, "query"),
        ({"query": "cpu", "limit": 0}, "limit"),
        ({"query": "cpu", "limit": 51}, "limit"),
        ({"query": "cpu", "limit": "5"}, "limit"),
        ({"query": "cpu", "errorCode": "E" * 65}, "errorCode"),
        ({"query": "cpu", "sessionId": "bad id!"}, "sessionId"),
        ({"query": "cpu", "sessionsId": "s-1"}, "sessionsId"),
    ],
)
def test_bad_input_is_400_and_records_nothing(api, library, body: dict, field: str) -> None:
    DiagnosisSessionFactory(session_id="s-1")
    body = {**body, "sessionId": body.get("sessionId", "s-1")} if field != "sessionId" else body

    response = search(api, **body)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert field in response.json()["errors"]
    assert not ToolInvocation.objects.exists()
    assert not CaseSearch.objects.exists()


def test_a_body_that_is_not_an_object_is_400(api, library) -> None:
    response = api.post(URL, ["ERROR 1205"], format="json")

    assert response.status_code == 400


def test_a_query_of_4000_characters_is_accepted(api, library) -> None:
    response = search(api, query=("锁等待 " * 1000)[:4000])

    assert response.status_code == 200


def test_a_frontend_key_may_not_search(make_client, library) -> None:
    response = make_client("frontend").post(URL, {"query": "cpu"}, format="json")

    assert response.status_code == 403


def test_a_case_not_indexed_yet_is_found_by_its_error_code(api, db) -> None:
    case = CaseLibraryFactory(error_code="ORA-01555", source_type=SourceType.MANUAL)
    CaseLibraryFactory(error_code="ORA-00060")

    body = search(api, query="ORA-1555 snapshot too old").json()

    assert body["matchLevel"] == "L0"
    assert [hit["caseId"] for hit in body["hits"]] == [case.case_id]
    assert search(api, query="snapshot too old").json()["matchLevel"] == "NONE"


def test_a_case_deleted_since_the_index_was_built_is_not_returned(api, library) -> None:
    library["lock"].delete()

    body = search(api, query="ERROR 1205").json()

    assert library["lock"].case_id not in [hit["caseId"] for hit in body["hits"]]


def test_the_session_page_lists_the_cases_its_searches_found_with_links(
    api, library, admin_client
) -> None:
    session = DiagnosisSessionFactory(session_id="linked")
    search(api, query="ERROR 1205 锁等待超时", sessionId="linked")

    page = admin_client.get(f"/admin/diagnosis/diagnosissession/{session.pk}/change/")

    lock = library["lock"]
    assert f'<a href="/admin/caselibrary/caselibrary/{lock.pk}/change/">{lock.title}</a>' in (
        page.content.decode()
    )
