"""The embedded opinion provider: section and keyword rules over the answer (pure Python)."""

import time

import pytest

from evaluation.opinion import FACTOR_NAMES, OpinionMalformed, OpinionSubject, ToolFact
from evaluation.opinion.base import validate_factors
from evaluation.opinion.heuristic import TEXT_LIMIT, HeuristicProvider, rationale_parts

DOCS = ToolFact("QueryInternalDocsTools", "SUCCESS", "L0", "order-service 504 runbook")
METRICS = ToolFact("QueryMetricsTools", "SUCCESS")
FAILED_CALL = ToolFact("QueryLogsTools", "FAILED", None, "order-service logs", "timeout")


def opinion(answer: str, *, query: str = "order-service 大量 504，怎么排查？", tools=(DOCS,)):  # type: ignore[no-untyped-def]
    factors = HeuristicProvider().form(OpinionSubject(query=query, answer=answer, tools=tools))
    assert [f["name"] for f in factors] == list(FACTOR_NAMES)
    assert all(isinstance(f["value"], bool) and f["rationale"] for f in factors)
    return {f["name"]: f["value"] for f in factors}


def test_a_chinese_answer_with_a_root_cause_and_numbered_steps() -> None:
    found = opinion("根因：下游 payment-gateway 连接池耗尽。\n1. 扩容连接池\n2. 加熔断")

    assert found["has_root_cause"] is True
    assert found["has_solution"] is True
    assert found["actionable_steps"] is True


def test_an_english_answer_with_a_root_cause_and_a_fix() -> None:
    found = opinion(
        "The root cause is a full connection pool. Fix: raise the pool size.", query="slow"
    )

    assert found["has_root_cause"] is True
    assert found["has_solution"] is True
    assert found["actionable_steps"] is False


def test_an_answer_without_markers_has_no_root_cause_nor_solution() -> None:
    found = opinion("订单服务看起来有点问题，请再观察一下。")

    assert found["has_root_cause"] is False
    assert found["has_solution"] is False
    assert found["actionable_steps"] is False


@pytest.mark.parametrize(
    "steps",
    [
        "1. 重启\n2. 观察",
        "1) restart\n2) watch",
        "1、重启\n2、观察",
        "（1）重启\n（2）观察",
        "① 重启\n② 观察",
        "第一步 重启\n第二步 观察",
        "Step 1 restart\nStep 2 watch",
        "- restart\n- watch",
        "```\nkubectl rollout restart deploy/order\n```",
    ],
)
def test_steps_are_found_in_every_usual_list_style(steps: str) -> None:
    assert opinion(f"处理如下：\n{steps}")["actionable_steps"] is True


def test_naming_a_tool_of_the_session_cites_evidence() -> None:
    assert opinion("按 InternalDocs 的说明处理。")["cites_evidence"] is True
    assert opinion("QueryMetricsTools 显示 CPU 正常。", tools=(METRICS,))["cites_evidence"] is True


def test_repeating_a_term_the_tool_was_asked_but_the_user_was_not_cites_evidence() -> None:
    # "runbook" is too common to count; "checkout-db" only came from the tool's query.
    tool = ToolFact("SearchTools", "SUCCESS", "L1", "checkout-db replication lag")
    assert opinion("checkout-db 复制延迟。", query="结账慢", tools=(tool,))["cites_evidence"]
    assert not opinion("结账慢，再看看。", query="结账慢", tools=(tool,))["cites_evidence"]


def test_an_evidence_phrase_counts_only_when_a_tool_succeeded() -> None:
    answer = "根据日志显示，连接池耗尽。"
    assert opinion(answer, tools=(METRICS,))["cites_evidence"] is True
    assert opinion(answer, tools=(FAILED_CALL,))["cites_evidence"] is False


def test_specifics_that_no_tool_fact_mentions_are_a_hallucination_risk() -> None:
    found = opinion("根因：数据库 10.0.3.7 的 ORA-01555，延迟 300ms。")

    assert found["hallucination_risk"] is True


def test_specifics_from_the_question_and_the_tool_facts_are_supported() -> None:
    tool = ToolFact("QueryLogsTools", "SUCCESS", "L0", "db-01.prod ORA-01555 300", "")
    found = opinion(
        "根因：db-01.prod 上的 ORA-01555（快照过旧），查询超过 300ms。",
        query="order-service 504",
        tools=(tool,),
    )

    assert found["hallucination_risk"] is False


def test_step_numbers_are_not_specifics() -> None:
    assert opinion("根因：连接池耗尽。\n1. 扩容\n2. 加熔断")["hallucination_risk"] is False


def test_no_successful_tool_call_is_a_hallucination_risk_for_any_claim() -> None:
    assert opinion("根因：连接池耗尽。", tools=(FAILED_CALL,))["hallucination_risk"] is True
    assert opinion("根因：连接池耗尽。", tools=())["hallucination_risk"] is True


def test_a_blank_answer_claims_nothing() -> None:
    assert set(opinion(" \n\t\u3000").values()) == {False}


def test_full_width_digits_and_letters_are_read_as_ascii() -> None:
    assert opinion("根因：ＯＲＡ－０１５５５", tools=(METRICS,))["hallucination_risk"] is True


@pytest.mark.parametrize(
    "answer",
    [
        "根因 🔥🚒 连接池耗尽 🙈 1. 扩容 👍\n2. 熔断 ✅",
        "根因\x01\x02\x07\x1b[31m\x7f\x85\u200b\u202e连接池\ufeff耗尽",
        "Root cause: пул соединений исчерпан; 解决: 扩容; الحل: إعادة التشغيل; 재시작 1. a\n2. b",
        "\ud7ff\ue000\U0010fffd \U0001f9ea" * 50,
        "x" * (TEXT_LIMIT * 20) + "根因",
    ],
    ids=["emoji", "control-characters", "mixed-scripts", "edge-code-points", "huge"],
)
def test_any_unicode_and_any_size_gives_five_boolean_factors(answer: str) -> None:
    started = time.monotonic()
    found = opinion(answer)
    # A generous bound, only to catch a pattern that backtracks on long input.
    assert time.monotonic() - started < 5
    assert set(found) == set(FACTOR_NAMES)


def test_pathological_input_does_not_make_a_pattern_backtrack() -> None:
    answers = [
        "1.2.3.4." * 20_000,
        "a-" * 50_000 + "!",
        "9" * 100_000,
        "a." * 50_000,
        "根因" * 50_000,
    ]
    started = time.monotonic()
    for answer in answers:
        opinion(answer)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("factors", "why"),
    [
        ("nope", "not a list"),
        ([{"name": n, "value": "true", "rationale": "r"} for n in FACTOR_NAMES], "not a boolean"),
        ([{"name": n, "value": 1, "rationale": "r"} for n in FACTOR_NAMES], "not a boolean"),
        ([{"name": n, "value": True, "rationale": "r"} for n in FACTOR_NAMES[:4]], "missing"),
        ([{"name": n, "value": True, "rationale": ""} for n in FACTOR_NAMES], "no rationale"),
        (
            [{"name": n, "value": True, "rationale": "r"} for n in (*FACTOR_NAMES, "extra")],
            "unknown factor",
        ),
        (
            [
                {"name": n, "value": True, "rationale": "r"}
                for n in (*FACTOR_NAMES, FACTOR_NAMES[0])
            ],
            "given twice",
        ),
    ],
)
def test_only_the_five_boolean_factors_pass_validation(factors: object, why: str) -> None:
    with pytest.raises(OpinionMalformed, match=why):
        validate_factors(factors)


def test_validation_puts_the_factors_in_the_fixed_order_and_trims_rationales() -> None:
    given = [{"name": n, "value": False, "rationale": "r" * 1000} for n in reversed(FACTOR_NAMES)]

    factors = validate_factors(given)

    assert [f["name"] for f in factors] == list(FACTOR_NAMES)
    assert all(len(f["rationale"]) == 300 for f in factors)


def test_a_remedy_word_inside_a_class_name_is_not_a_solution() -> None:
    found = opinion("AddressResolver 在 09:05 抛出异常，Resolver 池满了。", query="netty 报错")

    assert found["has_solution"] is False


@pytest.mark.parametrize(
    "answer",
    ["Resolve it by raising the pool size.", "重启后 resolved", "Fixed by a restart.", "修复fix"],
)
def test_whole_remedy_words_still_offer_a_solution(answer: str) -> None:
    assert opinion(answer)["has_solution"] is True


def test_times_of_day_are_not_specifics() -> None:
    found = opinion(
        "从 09:05 到 14:05:30，QueryInternalDocs 显示 order-service 504。",
        query="order-service 504",
    )

    assert found["hallucination_risk"] is False


def test_every_rationale_comes_from_a_template_it_can_be_matched_back_to() -> None:
    answers = [
        "",
        "根因：连接池耗尽。\n1. 扩容\n2. 熔断",
        "The root cause: db-7.prod at 10.1.1.1 answered 95% errors in 300ms on 8 GB, 12 pods",
        "看起来还好。",
        "```\nkubectl rollout restart deploy/order\n```",
    ]
    for answer in answers:
        for tools in [(DOCS,), (FAILED_CALL,), ()]:
            factors = HeuristicProvider().form(
                OpinionSubject(query="order-service 504", answer=answer, tools=tools)
            )
            for factor in factors:
                parts = rationale_parts(factor["rationale"])
                assert parts is not None, factor
                template, params = parts
                assert template % params == factor["rationale"]
