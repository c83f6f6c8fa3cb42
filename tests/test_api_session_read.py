"""GET /api/sessions/{sessionId} and GET /api/sessions."""

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

EVALUATION = {
    "evidence_score": 20,
    "source": "rule",
    "factors": [
        {"name": "has_successful_tool_call", "delta": 30, "description": "有成功的工具调用(1次)"},
        {"name": "retrieval_no_hit", "delta": -10, "description": "有检索调用但无任何命中"},
    ],
}


def test_a_session_reads_back_with_score_feedback_case_and_invocations(api) -> None:
    session = DiagnosisSessionFactory(
        succeeded=True, session_id="r-1", self_evaluation=EVALUATION, feedback="useful"
    )
    ToolInvocationFactory(session=session, invocation_id="a", match_level="NONE", hit_count=0)
    ToolInvocationFactory(session=session, invocation_id="b", status="FAILED", match_level=None)
    case = CaseLibraryFactory(diagnosis=session, source_type="AUTO")

    response = api.get("/api/sessions/r-1")

    assert response.status_code == 200
    body = response.json()
    assert body["sessionId"] == "r-1"
    assert body["selfEvaluation"] == EVALUATION
    assert list(body["selfEvaluation"]) == ["evidence_score", "source", "factors"]
    assert body["feedback"] == "useful"
    assert body["caseId"] == case.case_id
    assert [i["invocationId"] for i in body["toolInvocations"]] == ["a", "b"]
    assert list(body["toolInvocations"][0]) == [
        "invocationId",
        "toolName",
        "kind",
        "status",
        "matchLevel",
        "hitCount",
        "query",
        "errorMessage",
        "durationMs",
        "createdAt",
    ]


def test_self_evaluation_is_null_while_scoring_is_pending(api) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="pending")

    body = api.get("/api/sessions/pending").json()

    assert body["selfEvaluation"] is None
    assert body["caseId"] is None
    assert body["toolInvocations"] == []


def test_reading_a_session_costs_four_queries_however_many_invocations(
    api, django_assert_num_queries
) -> None:
    session = DiagnosisSessionFactory(session_id="big")
    ToolInvocationFactory.create_batch(50, session=session)

    with django_assert_num_queries(4):  # key, session + case, invocations, repeated recalls
        response = api.get("/api/sessions/big")

    assert len(response.json()["toolInvocations"]) == 50


def test_an_unknown_session_is_404(api) -> None:
    response = api.get("/api/sessions/nope")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nope" 不存在',
        "code": "not_found",
    }


def test_the_list_filters_by_status_and_feedback_newest_first(api) -> None:
    DiagnosisSessionFactory(session_id="a", succeeded=True, feedback="useful")
    DiagnosisSessionFactory(session_id="b", succeeded=True, feedback="not_useful")
    DiagnosisSessionFactory(session_id="c", succeeded=True)
    DiagnosisSessionFactory(session_id="d")

    def ids(query: str) -> list[str]:
        response = api.get(f"/api/sessions{query}")
        assert response.status_code == 200
        return [s["sessionId"] for s in response.json()["results"]]

    assert ids("") == ["d", "c", "b", "a"]
    assert ids("?status=SUCCESS") == ["c", "b", "a"]
    assert ids("?feedback=not_useful") == ["b"]
    assert ids("?feedback=none&status=SUCCESS") == ["c"]


def test_the_list_filters_by_creation_time(api) -> None:
    old = DiagnosisSessionFactory(session_id="old")
    old.created_at = old.created_at.replace(year=2025)
    old.save(update_fields=["created_at"])
    DiagnosisSessionFactory(session_id="new")

    response = api.get("/api/sessions?createdBefore=2026-01-01T00:00:00Z")
    assert [s["sessionId"] for s in response.json()["results"]] == ["old"]
    response = api.get("/api/sessions?createdAfter=2026-01-01T00:00:00Z")
    assert [s["sessionId"] for s in response.json()["results"]] == ["new"]


def test_the_list_pages_with_a_cursor(api) -> None:
    for n in range(5):
        DiagnosisSessionFactory(session_id=f"s{n}")

    first = api.get("/api/sessions?limit=2").json()
    second = api.get(first["next"]).json()
    third = api.get(second["next"]).json()

    pages = [[s["sessionId"] for s in page["results"]] for page in (first, second, third)]
    assert pages == [["s4", "s3"], ["s2", "s1"], ["s0"]]
    assert third["next"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?status=DONE", "status"),
        ("?feedback=yes", "feedback"),
        ("?createdAfter=yesterday", "createdAfter"),
        ("?limit=0", "limit"),
        ("?limit=1000", "limit"),
        ("?colour=red", "colour"),
    ],
)
def test_invalid_list_filters_are_400(api, query, field) -> None:
    response = api.get(f"/api/sessions{query}")

    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_cases_are_listed_newest_first_and_read_one_by_one(api) -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="src")
    older = CaseLibraryFactory(title="older")
    newer = CaseLibraryFactory(title="newer", diagnosis=session, source_type="AUTO")

    listed = api.get("/api/cases").json()["results"]
    assert [c["caseId"] for c in listed] == [newer.case_id, older.case_id]

    one = api.get(f"/api/cases/{newer.case_id}").json()
    assert one["sessionId"] == "src"
    assert one["sourceType"] == "AUTO"
    assert list(one) == [
        "caseId",
        "sessionId",
        "sourceType",
        "faultCategory",
        "errorCode",
        "title",
        "rootCause",
        "solution",
        "createdBy",
        "updatedBy",
        "createdAt",
        "updatedAt",
        "mergedInto",
    ]


@pytest.mark.parametrize("case_id", ["not-a-uuid", "00000000-0000-4000-8000-000000000000"])
def test_an_unknown_case_is_404(api, case_id) -> None:
    response = api.get(f"/api/cases/{case_id}")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": f'案例 "{case_id}" 不存在',
        "code": "not_found",
    }
