"""POST /api/cases: a key of the curator scope adds MANUAL cases."""

import pytest

from caselibrary.models import CaseLibrary
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory

pytestmark = pytest.mark.django_db

BODY = {
    "title": "Kafka 消费者组 lag 持续增长",
    "rootCause": "消费者 max.poll.records 过大，处理超时被踢出组，反复 rebalance",
    "solution": "调小 max.poll.records，增加 max.poll.interval.ms",
    "faultCategory": "MIDDLEWARE",
    "errorCode": "KafkaConsumerLagHigh",
}


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    for code in ("GENERAL", "MIDDLEWARE"):
        FaultCategoryFactory(code=code)


def test_a_curator_key_adds_a_manual_case(make_client) -> None:
    curator = make_client("curator")

    response = curator.post("/api/cases", BODY, format="json")

    assert response.status_code == 201
    case = CaseLibrary.objects.get()
    body = response.json()
    assert body["caseId"] == case.case_id
    assert (body["sourceType"], body["faultCategory"], body["title"]) == (
        "MANUAL",
        "MIDDLEWARE",
        BODY["title"],
    )
    assert case.created_by == "api:test-curator"


def test_a_case_linked_to_a_session(make_client) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    response = make_client("curator").post(
        "/api/cases", {**BODY, "sessionId": "s-1"}, format="json"
    )

    assert response.status_code == 201
    assert CaseLibrary.objects.get().diagnosis_id == "s-1"


@pytest.mark.parametrize("scope", ["agent", "frontend"])
def test_other_scopes_may_not_add_cases(make_client, scope) -> None:
    response = make_client(scope).post("/api/cases", BODY, format="json")

    assert response.status_code == 403
    assert not CaseLibrary.objects.exists()


def test_a_curator_key_reads_no_sessions(make_client) -> None:
    assert make_client("curator").get("/api/sessions").status_code == 403


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": None}, "title"),
        ({"faultCategory": "NOPE"}, "fault_category"),
        ({"colour": "red"}, "colour"),
        ({"sessionId": "no such session"}, "sessionId"),
        ({"sessionId": "ghost"}, "diagnosis"),
    ],
)
def test_bad_input_is_400_and_writes_nothing(make_client, change, field) -> None:
    response = make_client("curator").post("/api/cases", {**BODY, **change}, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not CaseLibrary.objects.exists()


def test_a_second_case_for_the_same_session_is_400(make_client) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    CaseLibraryFactory(diagnosis_id="s-1")

    response = make_client("full").post("/api/cases", {**BODY, "sessionId": "s-1"}, format="json")

    assert response.status_code == 400
    assert CaseLibrary.objects.count() == 1
