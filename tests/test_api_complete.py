"""POST /api/sessions/{sessionId}/complete: RUNNING -> SUCCESS/FAILED, once."""

import pytest

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

URL = "/api/sessions/{}/complete"


@pytest.fixture
def running():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="run-1")


def test_the_answer_is_stored_and_becomes_the_case_exactly_as_sent(api, running) -> None:
    # Markdown may open with an indented block; trimming it changed its meaning.
    answer = "\n    $ df -h /data\n根因：磁盘写满。\n解决：清理日志。  \n"

    api.post(URL.format("run-1"), {"status": "SUCCESS", "answer": answer}, format="json")
    case_id = api.post(
        "/api/feedback", {"sessionId": "run-1", "feedback": "useful"}, format="json"
    ).json()["caseId"]

    assert api.get("/api/sessions/run-1").json()["answer"] == answer
    case = api.get(f"/api/cases/{case_id}").json()
    assert (case["rootCause"], case["solution"]) == (answer, answer)


def test_completing_with_success_stores_the_answer_and_scores_the_session(
    api, running, django_capture_on_commit_callbacks
) -> None:
    ToolInvocationFactory.create_batch(2, session=running, match_level="L0")

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(
            URL.format("run-1"),
            {"status": "SUCCESS", "answer": "根因：连接池耗尽。\n1. 扩容"},
            format="json",
        )

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "SUCCESS"
    assert body["answer"] == "根因：连接池耗尽。\n1. 扩容"
    assert body["finishedAt"] is not None
    session = DiagnosisSession.objects.get()
    assert session.status == "SUCCESS" and session.finished_at is not None
    # Q_SYNC runs the enqueued task inline; tests/test_qcluster.py uses a real worker.
    assert len(callbacks) == 1
    assert session.self_evaluation == {
        "evidence_score": 65,
        "source": "rule",
        "factors": [
            {
                "name": "has_successful_tool_call",
                "delta": 30,
                "description": "有成功的工具调用(2次)",
            },
            {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
        ],
        "rules_version": 1,
    }


def test_completing_as_failed_is_not_scored_automatically(
    api, running, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(URL.format("run-1"), {"status": "FAILED"}, format="json")

    assert callbacks == []
    assert response.status_code == 200
    assert response.json()["status"] == "FAILED"
    assert response.json()["selfEvaluation"] is None
    assert DiagnosisSession.objects.get().answer is None


def test_repeating_the_same_completion_is_a_no_op(api, running) -> None:
    body = {"status": "SUCCESS", "answer": "restart the pod"}
    first = api.post(URL.format("run-1"), body, format="json").json()

    again = api.post(URL.format("run-1"), body, format="json")

    assert again.status_code == 200
    assert again.json()["finishedAt"] == first["finishedAt"]


@pytest.mark.parametrize(
    "second",
    [
        {"status": "FAILED"},
        {"status": "SUCCESS", "answer": "a different answer"},
    ],
)
def test_a_different_completion_is_a_conflict_that_changes_nothing(api, running, second) -> None:
    api.post(URL.format("run-1"), {"status": "SUCCESS", "answer": "restart"}, format="json")

    response = api.post(URL.format("run-1"), second, format="json")

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    session = DiagnosisSession.objects.get()
    assert (session.status, session.answer) == ("SUCCESS", "restart")


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"status": "SUCCESS"}, "answer", "A SUCCESS completion needs the answer."),
        ({"status": "SUCCESS", "answer": "  "}, "answer", "A SUCCESS completion needs the answer."),
        ({"status": "SUCCESS", "answer": None}, "answer", "A SUCCESS completion needs the answer."),
        (
            {"status": "SUCCESS", "answer": " \u200b\ufeff "},
            "answer",
            "A SUCCESS completion needs the answer.",
        ),
        (
            {"status": "RUNNING"},
            "status",
            'Unknown value "RUNNING". Allowed values: SUCCESS, FAILED.',
        ),
        (
            {"status": "success", "answer": "x"},
            "status",
            'Unknown value "success". Allowed values: SUCCESS, FAILED.',
        ),
        ({"answer": "x"}, "status", "This field is required."),
        ({"status": "FAILED", "answer": 3}, "answer", "Must be a string."),
    ],
)
def test_invalid_completions_are_400_and_leave_the_session_running(
    api, running, body, field, message
) -> None:
    response = api.post(URL.format("run-1"), body, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == {field: [message]}
    assert DiagnosisSession.objects.get().status == "RUNNING"


def test_completing_an_unknown_session_is_404(api) -> None:
    response = api.post(URL.format("ghost"), {"status": "FAILED"}, format="json")

    assert response.status_code == 404
