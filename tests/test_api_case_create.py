"""POST /api/cases: a key of the curator scope adds MANUAL cases."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction
from rest_framework.response import Response
from rest_framework.test import APIClient

from caselibrary.models import CaseLibrary
from diagnosis.models import ApiKey
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
        ({"title": "\u200b\u200c\u200d"}, "title"),
        ({"solution": " \ufeff "}, "solution"),
        ({"faultCategory": "NOPE"}, "faultCategory"),
        ({"colour": "red"}, "colour"),
        ({"sessionId": "no such session"}, "sessionId"),
    ],
)
def test_bad_input_is_400_and_writes_nothing(make_client, change, field) -> None:
    response = make_client("curator").post("/api/cases", {**BODY, **change}, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not CaseLibrary.objects.exists()


def test_a_category_outside_the_taxonomy_is_named_by_its_json_name(make_client) -> None:
    response = make_client("curator").post(
        "/api/cases", {**BODY, "faultCategory": "FOO"}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {
        "success": False,
        "message": "请求参数无效",
        "code": "invalid",
        "errors": {"faultCategory": ['"FOO" is not in the fault-category taxonomy.']},
    }
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize("code", ["general", "General", "GÉNÉRAL"])
def test_a_category_is_a_code_of_the_taxonomy_exactly_on_every_database(make_client, code) -> None:
    # MariaDB's collation compares without case or accents.
    response = make_client("curator").post(
        "/api/cases", {**BODY, "faultCategory": code}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["faultCategory"]
    assert not CaseLibrary.objects.exists()


def test_an_unknown_session_is_404_as_on_every_other_endpoint(make_client) -> None:
    response = make_client("curator").post(
        "/api/cases", {**BODY, "sessionId": "nope-zz-1"}, format="json"
    )

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nope-zz-1" 不存在',
        "code": "not_found",
    }
    assert response.json() == make_client("full").get("/api/sessions/nope-zz-1").json()
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize(
    "state",
    [{}, {"failed": True}, {"succeeded": True, "answer": "\u200b\ufeff"}],
    ids=["running", "failed-no-answer", "answer-of-invisible-characters"],
)
def test_a_session_without_an_answer_cannot_become_a_case(make_client, state) -> None:
    DiagnosisSessionFactory(session_id="s-1", **state)

    response = make_client("curator").post(
        "/api/cases", {**BODY, "sessionId": "s-1"}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "不能成为案例" in response.json()["message"]
    assert not CaseLibrary.objects.exists()


def test_a_second_case_for_the_same_session_is_409_naming_the_first(make_client) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)
    first = CaseLibraryFactory(diagnosis_id="s-1")

    response = make_client("curator").post(
        "/api/cases", {**BODY, "sessionId": "s-1"}, format="json"
    )

    assert response.status_code == 409
    body = response.json()
    assert (body["success"], body["code"]) == (False, "conflict")
    assert first.case_id in body["message"]
    assert "errors" not in body
    assert list(CaseLibrary.objects.values_list("case_id", flat=True)) == [first.case_id]


@pytest.mark.django_db(transaction=True)
def test_a_create_that_loses_the_race_for_its_session_is_409_and_writes_nothing() -> None:
    DiagnosisSessionFactory(session_id="race-1", succeeded=True)
    key = ApiKey.objects.create_key(name="race", scope="curator")[1]
    rival_holds_the_key, rival_may_commit = threading.Event(), threading.Event()

    def rival() -> str:
        # Another create for the same session, inserted but not yet committed: the
        # request's own check cannot see it, only the unique key can.
        try:
            with transaction.atomic():
                case = CaseLibraryFactory(diagnosis_id="race-1")
                rival_holds_the_key.set()
                rival_may_commit.wait(timeout=30)
            return case.case_id
        finally:
            connection.close()

    def create() -> Response:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
        try:
            return client.post("/api/cases", {**BODY, "sessionId": "race-1"}, format="json")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        rival_case = pool.submit(rival)
        assert rival_holds_the_key.wait(timeout=30)
        late = pool.submit(create)
        time.sleep(1)  # the request checks, then waits on the rival's uncommitted row
        rival_may_commit.set()
        rival_case_id, response = rival_case.result(), late.result()

    assert response.status_code == 409
    assert rival_case_id in response.json()["message"]
    assert list(CaseLibrary.objects.values_list("case_id", flat=True)) == [rival_case_id]
