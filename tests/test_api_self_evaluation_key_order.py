"""selfEvaluation leaves the service in the contract's key order (SPEC §3), whatever order
the database holds the keys in: MySQL 8's native JSON sorts them by length, and a row of
an adopted database may hold them in any order."""

import json

import pytest
from django.core.management import call_command
from django.db import connection

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# As MySQL 8 gives the rule part back: shortest keys first.
REORDERED = (
    '{"factors":[{"description":"有成功的工具调用(20次)","delta":30,'
    '"name":"has_successful_tool_call"}],"source":"rule","evidence_score":30}'
)
# With the rules' version and an opinion, every object's keys out of order.
REORDERED_WITH_OPINION = (
    '{"llm_opinion":{"created_at":"2026-01-02T03:04:05+00:00","factors":'
    '[{"rationale":"found","value":true,"name":"cites_evidence"}],"version":"1",'
    '"model":"heuristic","source":"heuristic"},"rules_version":2,'
    '"factors":[{"description":"L0 精确匹配命中","name":"l0_exact_match","delta":35}],'
    '"source":"rule","evidence_score":35}'
)


def stored_as(session_id: str, text: str) -> None:
    """Writes the column's text as such a database holds it, past the model."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE diagnosis_session SET self_evaluation = %s WHERE session_id = %s",
            [text, session_id],
        )


def pairs(text: str) -> list:
    """The JSON with every object as its list of (key, value) pairs, in order."""
    return json.loads(text, object_pairs_hook=list)


def keys_of(obj: list) -> list[str]:
    return [key for key, _ in obj]


def value_of(obj: list, key: str) -> object:
    return dict(obj)[key]


def test_the_session_api_returns_the_score_keys_in_contract_order_whatever_the_stored_order(
    api,
) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="reordered", evidence_score=30)
    stored_as("reordered", REORDERED)

    response = api.get("/api/sessions/reordered")

    evaluation = value_of(pairs(response.content.decode()), "selfEvaluation")
    assert keys_of(evaluation) == ["evidence_score", "source", "factors"]
    (factor,) = value_of(evaluation, "factors")
    assert factor == [
        ("name", "has_successful_tool_call"),
        ("delta", 30),
        ("description", "有成功的工具调用(20次)"),
    ]


def test_the_rules_version_and_the_opinion_follow_in_a_fixed_order_with_their_own_keys_ordered(
    api,
) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="opined", evidence_score=35)
    stored_as("opined", REORDERED_WITH_OPINION)

    response = api.get("/api/sessions/opined")

    evaluation = value_of(pairs(response.content.decode()), "selfEvaluation")
    assert keys_of(evaluation) == [
        "evidence_score",
        "source",
        "factors",
        "rules_version",
        "llm_opinion",
    ]
    assert keys_of(value_of(evaluation, "factors")[0]) == ["name", "delta", "description"]
    opinion = value_of(evaluation, "llm_opinion")
    assert keys_of(opinion) == ["source", "model", "version", "factors", "created_at"]
    assert keys_of(value_of(opinion, "factors")[0]) == ["name", "value", "rationale"]


def test_the_session_list_returns_the_keys_in_contract_order_too(api) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="listed", evidence_score=30)
    stored_as("listed", REORDERED)

    response = api.get("/api/sessions")

    (row,) = value_of(pairs(response.content.decode()), "results")
    assert keys_of(value_of(row, "selfEvaluation")) == ["evidence_score", "source", "factors"]


def test_the_bad_case_export_writes_the_keys_in_contract_order(capsys) -> None:
    DiagnosisSessionFactory(not_useful=True, session_id="bad-reordered", evidence_score=30)
    stored_as("bad-reordered", REORDERED)

    call_command("export", "bad_cases", "--format", "jsonl")

    (line,) = capsys.readouterr().out.splitlines()
    evaluation = value_of(pairs(line), "self_evaluation")
    assert keys_of(evaluation) == ["evidence_score", "source", "factors"]
    assert keys_of(value_of(evaluation, "factors")[0]) == ["name", "delta", "description"]


def test_the_bad_case_csv_export_writes_the_keys_in_contract_order(admin_client) -> None:
    DiagnosisSessionFactory(not_useful=True, session_id="bad-csv", evidence_score=30)
    stored_as("bad-csv", REORDERED)

    response = admin_client.get("/admin/export/bad_cases.csv")

    text = b"".join(response.streaming_content).decode("utf-8-sig")
    assert '{""evidence_score"": 30, ""source"": ""rule"", ""factors"": [{""name""' in text


def test_an_unknown_key_comes_after_the_known_ones() -> None:
    from diagnosis.self_evaluation import in_contract_order

    ordered = in_contract_order(
        {"zeta": 1, "factors": [], "alpha": 2, "source": "rule", "evidence_score": 0}
    )

    assert list(ordered) == ["evidence_score", "source", "factors", "alpha", "zeta"]
