"""The `openai` opinion provider against a local chat-completions server (tests/chat_server.py).

Normal, slow, 429, 500, malformed and refused replies; the daily budget; the API key is
sent to the endpoint and nowhere else.
"""

import logging

import pytest

from diagnosis.models import DiagnosisSession
from evaluation.models import OpinionBudget
from evaluation.opinion import OpinionError, OpinionMalformed, OpinionRefused
from evaluation.services import (
    OpinionBudgetExhausted,
    session_evaluate,
    session_opinion_form,
    sessions_opinion_form,
)
from tests.chat_server import VALID_FACTORS, chat_server
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

API_KEY = "sk-local-test-key-0123456789"


@pytest.fixture
def llm(settings):  # type: ignore[no-untyped-def]
    with chat_server() as server:
        settings.OPINION_PROVIDER = "openai"
        settings.OPINION_BASE_URL = server.base_url
        settings.OPINION_MODEL = "local-model"
        settings.OPINION_API_KEY = API_KEY
        settings.OPINION_TIMEOUT = 1.0
        settings.OPINION_MAX_RETRIES = 1
        settings.OPINION_DAILY_BUDGET = 100
        yield server


def scored(session_id: str = "llm-1") -> dict:
    session = DiagnosisSessionFactory(
        succeeded=True, session_id=session_id, answer="根因：连接池耗尽。\n1. 扩容\n2. 熔断"
    )
    ToolInvocationFactory(session=session, match_level="L0", query="order-service 504 runbook")
    return session_evaluate(session_id=session_id)


def stored(session_id: str = "llm-1") -> dict:
    return DiagnosisSession.objects.get(session_id=session_id).self_evaluation


def test_a_valid_reply_is_stored_as_the_opinion_after_the_rule_part(llm) -> None:
    rule_part = scored()

    opinion = session_opinion_form(session_id="llm-1")

    evaluation = stored()
    assert list(evaluation) == [*rule_part, "llm_opinion"]
    assert {k: evaluation[k] for k in rule_part} == rule_part
    assert evaluation["llm_opinion"] == opinion
    assert list(opinion) == ["source", "model", "version", "factors", "created_at"]
    assert opinion["source"] == "llm"
    assert opinion["model"] == "local-model"
    assert opinion["factors"] == VALID_FACTORS


def test_the_request_carries_the_model_the_facts_and_the_key(llm) -> None:
    scored()

    session_opinion_form(session_id="llm-1")

    (request,) = llm.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {API_KEY}"
    assert request["body"]["model"] == "local-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    user = request["body"]["messages"][-1]["content"]
    assert "连接池耗尽" in user
    assert "order-service 504 runbook" in user


def test_a_reply_slower_than_the_timeout_stores_nothing(llm, settings) -> None:
    settings.OPINION_TIMEOUT = 0.3
    settings.OPINION_MAX_RETRIES = 0
    rule_part = scored()
    llm.answer("slow")

    with pytest.raises(OpinionError, match="Timeout"):
        session_opinion_form(session_id="llm-1")

    assert stored() == rule_part


@pytest.mark.parametrize("status", ["429", "500"])
def test_a_failing_endpoint_is_retried_then_stores_nothing(llm, status) -> None:
    rule_part = scored()
    llm.answer(status, then=status)

    with pytest.raises(OpinionError):
        session_opinion_form(session_id="llm-1")

    assert len(llm.requests) == 2  # the first try and OPINION_MAX_RETRIES=1 retry
    assert stored() == rule_part


def test_a_retry_that_succeeds_stores_the_opinion(llm) -> None:
    scored()
    llm.answer("500", "normal")

    session_opinion_form(session_id="llm-1")

    assert len(llm.requests) == 2
    assert stored()["llm_opinion"]["factors"] == VALID_FACTORS


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("not-json-body", OpinionError),
        ("prose", OpinionMalformed),
        ("wrong-shape", OpinionMalformed),
        ("string-booleans", OpinionMalformed),
        ("empty", OpinionMalformed),
        ("refusal", OpinionRefused),
        ("content-filter", OpinionRefused),
    ],
)
def test_a_reply_that_is_not_a_valid_opinion_stores_nothing(llm, kind, error) -> None:
    rule_part = scored()
    llm.answer(kind)

    with pytest.raises(error):
        session_opinion_form(session_id="llm-1")

    assert stored() == rule_part


def test_a_failing_provider_never_blocks_completion_or_scoring(
    llm, api, django_capture_on_commit_callbacks
) -> None:
    # With Q_SYNC the opinion task runs inline, inside the scoring task: its failure must
    # stay its own. (Through a real worker it is a Failure: tests/test_opinion_qcluster.py.)
    llm.answer("500", then="500")
    api.post("/api/sessions", {"sessionId": "llm-api", "query": "q"}, format="json")
    api.post(
        "/api/sessions/llm-api/tool-invocations",
        {"toolName": "QueryInternalDocsTools", "status": "SUCCESS", "matchLevel": "L0"},
        format="json",
    )

    with django_capture_on_commit_callbacks(execute=True):
        completed = api.post(
            "/api/sessions/llm-api/complete", {"status": "SUCCESS", "answer": "a"}, format="json"
        )

    assert completed.status_code == 200
    evaluation = stored("llm-api")
    assert evaluation["evidence_score"] == 65
    assert "llm_opinion" not in evaluation


def test_the_key_is_never_logged(llm, api, caplog, django_capture_on_commit_callbacks) -> None:
    caplog.set_level(logging.DEBUG)
    llm.answer("normal", "500", "500", then="500")
    for sid in ("k1", "k2"):
        api.post("/api/sessions", {"sessionId": sid, "query": "q"}, format="json")
        api.post(
            f"/api/sessions/{sid}/tool-invocations",
            {"toolName": "T", "status": "SUCCESS", "matchLevel": "L0"},
            format="json",
        )
        with django_capture_on_commit_callbacks(execute=True):
            api.post(
                f"/api/sessions/{sid}/complete", {"status": "SUCCESS", "answer": "a"}, format="json"
            )

    assert "llm_opinion" in stored("k1")
    assert "llm_opinion" not in stored("k2")
    assert "InternalServerError" in caplog.text
    assert API_KEY not in caplog.text


def test_the_key_is_never_logged_even_when_the_endpoint_quotes_it(
    llm, api, caplog, django_capture_on_commit_callbacks
) -> None:
    caplog.set_level(logging.DEBUG)
    llm.answer(then="401-echoing-the-key")
    api.post("/api/sessions", {"sessionId": "k3", "query": "q"}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/api/sessions/k3/complete", {"status": "SUCCESS", "answer": "a"}, format="json")

    assert "llm_opinion" not in stored("k3")
    assert "AuthenticationError" in caplog.text
    assert "Incorrect API key provided" in caplog.text
    assert API_KEY not in caplog.text


def test_the_daily_budget_stops_calls_once_spent(llm, settings) -> None:
    settings.OPINION_DAILY_BUDGET = 2
    for n in range(3):
        scored(f"b{n}")

    session_opinion_form(session_id="b0")
    session_opinion_form(session_id="b1")
    with pytest.raises(OpinionBudgetExhausted):
        session_opinion_form(session_id="b2")

    assert len(llm.requests) == 2
    assert OpinionBudget.objects.get().calls == 2
    assert "llm_opinion" not in stored("b2")


def test_a_batch_stops_at_the_budget_and_keeps_what_it_formed(llm, settings) -> None:
    settings.OPINION_DAILY_BUDGET = 2
    for n in range(4):
        scored(f"c{n}")

    written, failed = sessions_opinion_form(session_ids=[f"c{n}" for n in range(4)])

    assert (written, failed) == (2, 2)
    assert len(llm.requests) == 2
    with_opinion = [n for n in range(4) if "llm_opinion" in stored(f"c{n}")]
    assert len(with_opinion) == 2


def test_a_misconfigured_provider_never_calls_a_default_endpoint(settings) -> None:
    settings.OPINION_PROVIDER = "openai"
    settings.OPINION_BASE_URL = ""
    settings.OPINION_MODEL = ""
    rule_part = scored()

    with pytest.raises(OpinionError, match="OPINION_BASE_URL"):
        session_opinion_form(session_id="llm-1")

    assert stored() == rule_part
