"""In-process callers of the services are held to the REST API's rules: what a request
would be refused with (400), a call is refused with, in the same words, before anything
is written; and a refusal that reached a view would still be a 400."""

import json
from collections.abc import Callable

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from config.api import api_error_of
from diagnosis import services
from diagnosis.facts_rules import SESSION_ID_INVALID, session_id_problems
from diagnosis.models import SESSION_ID_REGEX, DiagnosisSession, ToolInvocation
from diagnosis.serializers import StrictSessionIdField
from feedback.models import FeedbackEntry
from feedback.services import FeedbackConflict, feedback_submit
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

FAILED_CALL = "A failed call has no match level: leave matchLevel out or null."
NOT_RETRIEVAL = "Only retrieval calls have a match level: leave matchLevel out or null."


def refused(call: Callable, **arguments: object) -> dict[str, list[str]]:
    """The problems a service call is refused with, as the API would answer them."""
    with pytest.raises((ValidationError, DjangoValidationError)) as refusal:
        call(**arguments)
    error = api_error_of(refusal.value)
    assert (error.status, error.code) == (400, "invalid")
    return error.errors


def rest_errors(response) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    assert response.status_code == 400, response.json()
    return response.json()["errors"]


def test_a_session_id_the_api_refuses_is_refused_in_process_in_its_words(api) -> None:
    over_rest = api.post("/api/sessions", {"sessionId": "a b/ c", "query": "q"}, format="json")

    problems = refused(services.session_start, session_id="a b/ c", query="q")

    assert problems == {"session_id": [SESSION_ID_INVALID]}
    assert rest_errors(over_rest) == {"sessionId": [SESSION_ID_INVALID]}
    assert not DiagnosisSession.objects.exists()


def test_an_empty_session_id_and_a_blank_query_are_refused_in_process_as_over_rest(api) -> None:
    over_rest = api.post("/api/sessions", {"sessionId": "", "query": "   "}, format="json")

    problems = refused(services.session_start, session_id="", query="   ")

    rest = rest_errors(over_rest)
    assert problems == {"session_id": rest["sessionId"], "query": rest["query"]}
    assert not DiagnosisSession.objects.exists()


def test_a_user_id_longer_than_its_column_is_refused_in_process_as_over_rest(api) -> None:
    over_rest = api.post("/api/sessions", {"query": "q", "userId": "u" * 65}, format="json")

    problems = refused(services.session_start, query="q", user_id="u" * 65)

    assert problems == {"user_id": rest_errors(over_rest)["userId"]}
    assert not DiagnosisSession.objects.exists()


def test_match_levels_on_a_failed_call_and_on_another_tool_are_refused_in_process(
    api, django_assert_num_queries
) -> None:
    DiagnosisSessionFactory(session_id="s")
    over_rest = api.post(
        "/api/sessions/s/tool-invocations",
        [
            {"toolName": "T", "status": "FAILED", "matchLevel": "L0"},
            {"toolName": "DateTimeTools", "status": "SUCCESS", "kind": "other", "matchLevel": "L0"},
        ],
        format="json",
    )

    with django_assert_num_queries(0):
        problems = refused(
            services.invocations_record,
            session_id="s",
            invocations=[
                {"tool_name": "T", "status": "FAILED", "match_level": "L0"},
                {
                    "tool_name": "DateTimeTools",
                    "status": "SUCCESS",
                    "kind": "other",
                    "match_level": "L0",
                },
            ],
        )

    assert problems == {
        "invocations.0.match_level": [FAILED_CALL],
        "invocations.1.match_level": [NOT_RETRIEVAL],
    }
    assert rest_errors(over_rest) == {
        "0.matchLevel": [FAILED_CALL],
        "1.matchLevel": [NOT_RETRIEVAL],
    }
    assert not ToolInvocation.objects.exists()


def test_unknown_status_kind_and_match_level_values_are_refused_in_process(api) -> None:
    DiagnosisSessionFactory(session_id="s")
    over_rest = api.post(
        "/api/sessions/s/tool-invocations",
        {"toolName": "T", "status": "OK", "kind": "weird", "matchLevel": "L9"},
        format="json",
    )

    problems = refused(
        services.invocations_record,
        session_id="s",
        invocations=[{"tool_name": "T", "status": "OK", "kind": "weird", "match_level": "L9"}],
    )

    rest = rest_errors(over_rest)
    assert problems == {
        "invocations.0.status": rest["status"],
        "invocations.0.kind": rest["kind"],
        "invocations.0.match_level": rest["matchLevel"],
    }
    assert rest["status"] == ['Unknown value "OK". Allowed values: SUCCESS, FAILED.']
    assert not ToolInvocation.objects.exists()


def test_one_bad_invocation_refuses_the_whole_batch_in_process() -> None:
    DiagnosisSessionFactory(session_id="s")
    good = {"tool_name": "QueryInternalDocsTools", "status": "SUCCESS", "match_level": "L1"}

    problems = refused(
        services.invocations_record,
        session_id="s",
        invocations=[good, good, {"tool_name": "T", "status": "SUCCESS", "hit_count": None}],
    )

    assert list(problems) == ["invocations.2.hit_count"]
    assert not ToolInvocation.objects.exists()


def test_a_completion_status_the_api_refuses_leaves_the_session_running_and_open(api) -> None:
    DiagnosisSessionFactory(session_id="s")
    over_rest = api.post(
        "/api/sessions/s/complete", {"status": "DONE", "answer": "a"}, format="json"
    )

    problems = refused(services.session_complete, session_id="s", status="DONE", answer="a")

    assert problems == {"status": rest_errors(over_rest)["status"]}
    assert problems["status"] == ['Unknown value "DONE". Allowed values: SUCCESS, FAILED.']
    session = DiagnosisSession.objects.get()
    assert (session.status, session.answer, session.finished_at) == ("RUNNING", None, None)
    with pytest.raises(FeedbackConflict):  # no case is made of a running session
        feedback_submit(session_id="s", feedback="useful")


def test_a_success_completion_without_an_answer_is_refused_in_process_as_over_rest(api) -> None:
    DiagnosisSessionFactory(session_id="s")
    over_rest = api.post(
        "/api/sessions/s/complete", {"status": "SUCCESS", "answer": " "}, format="json"
    )

    problems = refused(services.session_complete, session_id="s", status="SUCCESS", answer=" ")

    assert problems == {"answer": rest_errors(over_rest)["answer"]}
    assert DiagnosisSession.objects.get().status == "RUNNING"


def test_facts_and_completions_for_a_malformed_session_id_are_refused_before_any_lookup(
    django_assert_num_queries,
) -> None:
    with django_assert_num_queries(0):
        facts = refused(
            services.invocations_record,
            session_id="a b",
            invocations=[{"tool_name": "T", "status": "SUCCESS"}],
        )
        completion = refused(
            services.session_complete, session_id="a b", status="FAILED", answer=None
        )

    assert facts == completion == {"session_id": [SESSION_ID_INVALID]}


def test_feedback_in_process_for_a_malformed_session_id_is_refused_in_the_endpoints_words(
    api,
) -> None:
    over_rest = api.post(
        "/api/feedback", {"sessionId": "a b/ c", "feedback": "useful"}, format="json"
    )

    problems = refused(feedback_submit, session_id="a b/ c", feedback="useful")

    assert over_rest.status_code == 400
    assert problems == {"session_id": [over_rest.json()["message"]]}


def test_feedback_in_process_with_an_unknown_verdict_is_refused_in_the_endpoints_words(
    api,
) -> None:
    DiagnosisSessionFactory(session_id="fb-maybe", succeeded=True)
    over_rest = api.post(
        "/api/feedback", {"sessionId": "fb-maybe", "feedback": "maybe"}, format="json"
    )

    problems = refused(feedback_submit, session_id="fb-maybe", feedback="maybe")

    assert over_rest.status_code == 400
    assert problems == {"feedback": [over_rest.json()["message"]]}
    assert DiagnosisSession.objects.get(session_id="fb-maybe").feedback is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reason", "bogus-reason"),
        ("comment", "x" * 100_000),
        ("comment", "a\ud800b"),
        ("correction", "x" * 100_000),
    ],
)
def test_feedback_in_process_refuses_the_words_the_endpoint_refuses(api, field, value) -> None:
    DiagnosisSessionFactory(session_id="fb-words", succeeded=True)
    body = {"sessionId": "fb-words", "feedback": "not_useful", field: value}
    # As a client's JSON carries a lone surrogate: escaped.
    over_rest = api.post("/api/feedback", json.dumps(body), content_type="application/json")

    problems = refused(
        feedback_submit, session_id="fb-words", feedback="not_useful", **{field: value}
    )

    assert over_rest.status_code == 400
    assert problems == {field: [over_rest.json()["message"]]}
    assert DiagnosisSession.objects.get(session_id="fb-words").feedback is None
    assert not FeedbackEntry.objects.exists()


# A NUL in the reader's words, refused in process as over REST: test_api_feedback_nul.py.


def test_a_valid_in_process_session_scores_as_the_same_session_over_rest(
    api, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/api/sessions", {"sessionId": "rest", "query": "Kafka lag"}, format="json")
        api.post(
            "/api/sessions/rest/tool-invocations",
            [
                {
                    "invocationId": "1",
                    "toolName": "QueryInternalDocsTools",
                    "status": "SUCCESS",
                    "matchLevel": "L0",
                    "hitCount": 2,
                },
                {"toolName": "DateTimeTools", "kind": "other", "status": "SUCCESS"},
            ],
            format="json",
        )
        api.post(
            "/api/sessions/rest/complete", {"status": "SUCCESS", "answer": "扩容"}, format="json"
        )
        services.session_start(session_id="inproc", query="Kafka lag")
        recorded = services.invocations_record(
            session_id="inproc",
            invocations=[
                {
                    "invocation_id": "1",
                    "tool_name": "QueryInternalDocsTools",
                    "status": "SUCCESS",
                    "match_level": "L0",
                    "hit_count": 2,
                },
                {"tool_name": "DateTimeTools", "kind": "other", "status": "SUCCESS"},
            ],
        )
        _, completed = services.session_complete(
            session_id="inproc", status="SUCCESS", answer="扩容"
        )

    assert (recorded.received, recorded.created, completed) == (2, 2, True)
    scores = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    assert scores["inproc"] == scores["rest"]
    assert scores["inproc"]["evidence_score"] == 65


class DeclaredSessionId(serializers.RegexField):
    """The API's sessionId field as DRF's own validators check it."""

    def __init__(self) -> None:
        super().__init__(
            SESSION_ID_REGEX,
            max_length=64,
            trim_whitespace=False,
            error_messages={"invalid": SESSION_ID_INVALID},
        )

    def to_internal_value(self, data):  # type: ignore[no-untyped-def]
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


@pytest.mark.parametrize(
    "value",
    ["s-1", "a" * 64, "", " ", "a b/ c", "a" * 65, "a\x00b", "a\ud800", "é" * 65 + "\x00", 7, True],
)
def test_the_shared_session_id_rule_lists_what_the_declared_field_always_listed(value) -> None:
    def outcome(field: serializers.Field) -> object:
        try:
            return field.run_validation(value)
        except serializers.ValidationError as exc:
            return [str(message) for message in exc.detail]

    declared = outcome(DeclaredSessionId())

    assert outcome(StrictSessionIdField()) == declared
    assert session_id_problems(value) == ([] if declared == value else declared)
