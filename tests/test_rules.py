import json
import re
from itertools import product

import pytest
from django.db.models import TextChoices
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.models import InvocationStatus, MatchLevel, ToolKind
from evaluation.rules import (
    RULES,
    RULES_VERSION,
    STOP_RULES,
    InvocationFacts,
    evaluate,
)
from evaluation.selectors import counting_fingerprint

# The contract's keys in the contract's order, then the rule set's version.
RESULT_KEYS = ["evidence_score", "source", "factors", "rules_version"]
FACTOR_KEYS = ["name", "delta", "description"]

EXECUTION_FAILED = {"name": "execution_failed", "delta": 0, "description": "执行失败"}
NO_TOOL_CALL = {"name": "no_tool_call", "delta": 0, "description": "无任何工具调用"}
L0_EXACT_MATCH = {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"}
L1_SEMANTIC_MATCH = {"name": "l1_semantic_match", "delta": 20, "description": "L1 语义匹配命中"}
RETRIEVAL_NO_HIT = {
    "name": "retrieval_no_hit",
    "delta": -10,
    "description": "有检索调用但无任何命中",
}
ALL_TOOL_CALLS_FAILED = {
    "name": "all_tool_calls_failed",
    "delta": -20,
    "description": "全部工具调用失败",
}


def has_successful_tool_call(count):
    return {
        "name": "has_successful_tool_call",
        "delta": 30,
        "description": f"有成功的工具调用({count}次)",
    }


def ok(kind="retrieval", level=None):
    return ("SUCCESS", kind, level)


def failed(kind="retrieval", level=None):
    return ("FAILED", kind, level)


def evaluate_calls(calls, session_status="SUCCESS"):
    return evaluate(session_status=session_status, facts=InvocationFacts.from_calls(calls))


def assert_result(result, score, factors):
    assert result == {
        "evidence_score": score,
        "source": "rule",
        "factors": factors,
        "rules_version": RULES_VERSION,
    }
    assert list(result) == RESULT_KEYS
    for factor in result["factors"]:
        assert list(factor) == FACTOR_KEYS


# The seed example, written out literally so the stored JSON shape cannot drift.


def test_twenty_successful_calls_with_an_l0_hit_score_65():
    calls = [ok(level="L0")] + [ok(level="NONE")] * 19

    result = evaluate_calls(calls)

    assert result == {
        "evidence_score": 65,
        "source": "rule",
        "factors": [
            {
                "name": "has_successful_tool_call",
                "delta": 30,
                "description": "有成功的工具调用(20次)",
            },
            {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
        ],
        "rules_version": RULES_VERSION,
    }
    assert list(result) == RESULT_KEYS
    assert [list(factor) for factor in result["factors"]] == [FACTOR_KEYS, FACTOR_KEYS]


# Each rule as close to alone as the rules allow.


def test_a_failed_session_with_invocations_scores_0_with_execution_failed_only():
    calls = [ok(level="L0"), ok(level="L1"), failed()]

    assert_result(evaluate_calls(calls, session_status="FAILED"), 0, [EXECUTION_FAILED])


def test_a_failed_session_without_invocations_is_execution_failed_not_no_tool_call():
    assert_result(evaluate_calls([], session_status="FAILED"), 0, [EXECUTION_FAILED])


def test_a_successful_session_without_invocations_scores_0_with_no_tool_call_only():
    assert_result(evaluate_calls([]), 0, [NO_TOOL_CALL])


def test_one_successful_other_call_scores_30_from_has_successful_tool_call_alone():
    assert_result(evaluate_calls([ok(kind="other")]), 30, [has_successful_tool_call(1)])


def test_a_successful_l0_hit_adds_35_on_top_of_the_successful_call():
    assert_result(
        evaluate_calls([ok(level="L0")]), 65, [has_successful_tool_call(1), L0_EXACT_MATCH]
    )


def test_a_successful_l1_hit_adds_20_on_top_of_the_successful_call():
    assert_result(
        evaluate_calls([ok(level="L1")]), 50, [has_successful_tool_call(1), L1_SEMANTIC_MATCH]
    )


def test_a_successful_retrieval_without_a_hit_subtracts_10():
    assert_result(
        evaluate_calls([ok(level="NONE")]), 20, [has_successful_tool_call(1), RETRIEVAL_NO_HIT]
    )


def test_a_single_failed_other_call_fires_all_tool_calls_failed_alone():
    assert_result(evaluate_calls([failed(kind="other")]), 0, [ALL_TOOL_CALLS_FAILED])


# Rules that interact.


def test_l0_and_l1_hits_together_count_only_l0():
    calls = [ok(level="L0"), ok(level="L1"), ok(level="L1")]

    assert_result(evaluate_calls(calls), 65, [has_successful_tool_call(3), L0_EXACT_MATCH])


def test_an_l0_on_a_failed_call_is_not_a_hit():
    calls = [failed(level="L0"), ok(level="NONE")]

    assert_result(evaluate_calls(calls), 20, [has_successful_tool_call(1), RETRIEVAL_NO_HIT])


def test_an_l1_on_a_failed_call_does_not_stop_an_l0_on_a_successful_call():
    calls = [failed(level="L1"), ok(level="L0")]

    assert_result(evaluate_calls(calls), 65, [has_successful_tool_call(1), L0_EXACT_MATCH])


def test_an_l0_only_on_a_failed_call_scores_like_no_hit_at_all():
    assert_result(
        evaluate_calls([failed(level="L0")]), 0, [RETRIEVAL_NO_HIT, ALL_TOOL_CALLS_FAILED]
    )


def test_retrieval_calls_that_all_failed_fire_no_hit_and_all_failed_and_score_0():
    calls = [failed(), failed(level="NONE"), failed(level="L1")]

    assert_result(evaluate_calls(calls), 0, [RETRIEVAL_NO_HIT, ALL_TOOL_CALLS_FAILED])


def test_successful_other_calls_only_score_30_without_retrieval_no_hit():
    calls = [ok(kind="other")] * 3

    assert_result(evaluate_calls(calls), 30, [has_successful_tool_call(3)])


def test_other_calls_with_some_failures_still_score_30():
    calls = [ok(kind="other"), failed(kind="other")]

    assert_result(evaluate_calls(calls), 30, [has_successful_tool_call(1)])


def test_a_failed_retrieval_next_to_a_successful_hit_does_not_cost_points():
    calls = [failed(), ok(level="L1")]

    assert_result(evaluate_calls(calls), 50, [has_successful_tool_call(1), L1_SEMANTIC_MATCH])


def test_a_negative_sum_of_deltas_is_clamped_to_0():
    result = evaluate_calls([failed()])

    assert sum(factor["delta"] for factor in result["factors"]) == -30
    assert_result(result, 0, [RETRIEVAL_NO_HIT, ALL_TOOL_CALLS_FAILED])


@pytest.mark.parametrize("count", [1, 20])
def test_the_successful_call_description_carries_the_count(count):
    result = evaluate_calls([ok(kind="other")] * count)

    assert result["factors"][0]["description"] == f"有成功的工具调用({count}次)"


def test_facts_from_an_aggregate_query_score_the_same_as_the_calls_they_count():
    facts = InvocationFacts(total=20, successful=20, retrieval=20, l0_hits=1, l1_hits=0)

    assert evaluate(session_status="SUCCESS", facts=facts) == evaluate_calls(
        [ok(level="L0")] + [ok(level="NONE")] * 19
    )


# Input validation.


@pytest.mark.parametrize("status", ["RUNNING", "success", "", None])
def test_a_session_status_other_than_success_or_failed_raises(status):
    facts = InvocationFacts.from_calls([ok()])

    with pytest.raises(ValueError, match="status"):
        evaluate(session_status=status, facts=facts)


def test_evaluate_takes_keyword_arguments_only():
    with pytest.raises(TypeError):
        evaluate("SUCCESS", InvocationFacts.from_calls([]))  # type: ignore[misc]


@pytest.mark.parametrize(
    "counts",
    [
        {"total": -1, "successful": 0, "retrieval": 0, "l0_hits": 0, "l1_hits": 0},
        {"total": 1, "successful": 0, "retrieval": 0, "l0_hits": -1, "l1_hits": 0},
        {"total": 1, "successful": 2, "retrieval": 0, "l0_hits": 0, "l1_hits": 0},
        {"total": 1, "successful": 1, "retrieval": 2, "l0_hits": 0, "l1_hits": 0},
        {"total": 2, "successful": 1, "retrieval": 2, "l0_hits": 1, "l1_hits": 1},
        {"total": 2, "successful": 0, "retrieval": 2, "l0_hits": 1, "l1_hits": 0},
    ],
    ids=[
        "negative_total",
        "negative_hits",
        "more_successful_than_total",
        "more_retrieval_than_total",
        "more_hits_than_successful",
        "hit_without_a_successful_call",
    ],
)
def test_inconsistent_facts_raise_value_error(counts):
    with pytest.raises(ValueError):
        InvocationFacts(**counts)


@pytest.mark.parametrize("value", [None, 1.0, True, "1"])
def test_facts_that_are_not_ints_raise_type_error(value):
    with pytest.raises(TypeError):
        InvocationFacts(total=value, successful=0, retrieval=0, l0_hits=0, l1_hits=0)


# (status, kind, match_level): each position's model choices.
CALL_CHOICES = (InvocationStatus, ToolKind, MatchLevel)
CALL_FIELDS = ("invocation status", "tool kind", "match level")


def near_misses(choices: type[TextChoices]) -> list[str]:
    """Values a caller could take for one of `choices` that are none of them."""
    values = set(choices.values)
    near = {value.swapcase() for value in values} | {f"{value}_x" for value in values} | {""}
    return sorted(near - values)


@pytest.mark.parametrize(
    ("position", "value"),
    [
        pytest.param(position, value, id=f"{CALL_FIELDS[position]} {value!r}")
        for position, choices in enumerate(CALL_CHOICES)
        for value in near_misses(choices)
    ],
)
def test_from_calls_rejects_values_outside_the_model_choices(position, value):
    call = [choices.values[0] for choices in CALL_CHOICES]
    call[position] = value

    with pytest.raises(ValueError, match=re.escape(f"unknown {CALL_FIELDS[position]}: {value!r}")):
        InvocationFacts.from_calls([tuple(call)])


def test_from_calls_accepts_every_combination_of_the_model_choices():
    calls = list(product(InvocationStatus.values, ToolKind.values, [*MatchLevel.values, None]))

    assert InvocationFacts.from_calls(calls).total == len(calls)


def test_from_calls_counts_hits_on_successful_calls_only():
    calls = [
        ok(level="L0"),
        ok(level="L1"),
        ok(kind="other"),
        failed(level="L0"),
        failed(level="L1"),
        failed(kind="other"),
    ]

    assert InvocationFacts.from_calls(calls) == InvocationFacts(
        total=6, successful=3, retrieval=4, l0_hits=1, l1_hits=1
    )


def test_rules_are_declared_as_data_in_evaluation_order():
    assert [rule.name for rule in STOP_RULES] == ["execution_failed", "no_tool_call"]
    assert [(rule.name, rule.delta) for rule in RULES] == [
        ("has_successful_tool_call", 30),
        ("l0_exact_match", 35),
        ("l1_semantic_match", 20),
        ("retrieval_no_hit", -10),
        ("all_tool_calls_failed", -20),
    ]


# Properties over arbitrary sessions.

calls_strategy = st.lists(
    st.tuples(
        st.sampled_from(["SUCCESS", "FAILED"]),
        st.sampled_from(["retrieval", "other"]),
        st.sampled_from(["L0", "L1", "NONE", None]),
    ),
    max_size=30,
)
session_status_strategy = st.sampled_from(["SUCCESS", "FAILED"])
STOP_NAMES = {"execution_failed", "no_tool_call"}


# database=None: no example database is written into the checkout.
@settings(database=None)
@given(calls=calls_strategy, session_status=session_status_strategy)
def test_any_session_yields_a_clamped_score_and_a_consistent_factor_list(calls, session_status):
    result = evaluate_calls(calls, session_status=session_status)
    names = [factor["name"] for factor in result["factors"]]
    deltas = [factor["delta"] for factor in result["factors"]]

    assert list(result) == RESULT_KEYS
    assert all(list(factor) == FACTOR_KEYS for factor in result["factors"])
    assert result["source"] == "rule"
    assert type(result["evidence_score"]) is int
    assert result["evidence_score"] == max(0, min(100, sum(deltas)))
    assert 0 <= result["evidence_score"] <= 100
    assert names
    if STOP_NAMES & set(names):
        assert len(names) == 1
        assert result["evidence_score"] == 0
    assert not {"l0_exact_match", "l1_semantic_match"} <= set(names)

    round_tripped = json.loads(json.dumps(result, ensure_ascii=False))
    assert round_tripped == result
    assert list(round_tripped) == RESULT_KEYS
    assert [list(factor) for factor in round_tripped["factors"]] == [
        list(factor) for factor in result["factors"]
    ]


@settings(database=None)
@given(calls=calls_strategy, session_status=session_status_strategy)
def test_any_session_fires_the_rules_its_raw_calls_imply(calls, session_status):
    successful = [call for call in calls if call[0] == "SUCCESS"]
    hit_levels = {call[2] for call in successful}
    if session_status == "FAILED":
        expected = ["execution_failed"]
    elif not calls:
        expected = ["no_tool_call"]
    else:
        expected = []
        if successful:
            expected.append("has_successful_tool_call")
        if "L0" in hit_levels:
            expected.append("l0_exact_match")
        elif "L1" in hit_levels:
            expected.append("l1_semantic_match")
        elif any(call[1] == "retrieval" for call in calls):
            expected.append("retrieval_no_hit")
        if not successful:
            expected.append("all_tool_calls_failed")

    result = evaluate_calls(calls, session_status=session_status)

    assert [factor["name"] for factor in result["factors"]] == expected


# Rule set version -> the fingerprint of the rules it names and of the counting that feeds
# them (the fact columns of the query in evaluation/selectors.py). Changing either changes
# the fingerprint: bump RULES_VERSION and add its line here (a change of layout alone:
# update the line of the current version).
FINGERPRINTS = {1: "db025380f5175cb59c802b2b940a1f931e84366591b2f3fab74e81cdab7f29ce"}


def test_the_rules_and_their_counting_cannot_change_without_a_new_rules_version() -> None:
    assert counting_fingerprint() == FINGERPRINTS[RULES_VERSION], (
        "The rules or the counting that feeds them (evaluation/selectors.py) changed: bump "
        "evaluation.rules.RULES_VERSION (rescore --outdated then rescores what the old "
        "rules scored) and record the new fingerprint."
    )


def test_every_result_names_the_rule_set_that_made_it() -> None:
    for status, calls in (("FAILED", []), ("SUCCESS", []), ("SUCCESS", [ok(level="L0")])):
        assert evaluate_calls(calls, session_status=status)["rules_version"] == RULES_VERSION
