"""The hot paths' shortcuts accept nothing the full validation would refuse, and hand on
exactly what it would. (Feedback and tool-invocation bodies that are plainly valid skip
DRF's serializer and Django's full_clean, which cost more than storing the rows.)"""

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.models import ToolInvocation
from diagnosis.serializers import ToolInvocationInput
from diagnosis.services import _plainly_valid
from diagnosis.views import _plain_invocations
from feedback.serializers import FeedbackInput
from feedback.views import plain_feedback

odd_text = st.one_of(
    st.text(max_size=70),
    st.sampled_from(["", " ", " x", "x ", "a\x00b", "\ud800", "x" * 64, "x" * 65, "t" * 129]),
)
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False),
    odd_text,
    st.lists(st.integers(), max_size=2),
)


def near(*good: object) -> st.SearchStrategy:
    """Mostly the right values, sometimes anything at all."""
    return st.one_of(st.sampled_from(good), anything)


invocation_items = st.dictionaries(
    keys=st.sampled_from(
        [
            "invocationId",
            "toolName",
            "kind",
            "status",
            "matchLevel",
            "hitCount",
            "query",
            "errorMessage",
            "durationMs",
            "match_level",
        ]
    ),
    values=anything,
).flatmap(
    lambda extra: st.fixed_dictionaries(
        {
            "toolName": near("QueryInternalDocsTools", "t"),
            "status": near("SUCCESS", "FAILED", "success"),
        },
        optional={
            "invocationId": near("inv-1", None),
            "kind": near("retrieval", "other", "RETRIEVAL"),
            "matchLevel": near("L0", "L1", "NONE", None, "l0"),
            "hitCount": near(0, 3, 2_147_483_647, 2_147_483_648, -1),
            "durationMs": near(None, 0, 120, -1),
            "query": near(None, "connection pool", ""),
            "errorMessage": near(None, "timeout"),
        },
    ).map(lambda item: {**extra, **item} if len(extra) < 2 else item)
)


@settings(max_examples=300, deadline=None)
@given(item=invocation_items)
def test_a_plainly_valid_invocation_is_exactly_what_the_serializer_returns(item) -> None:
    plain = _plain_invocations([item])
    if plain is None:
        return
    serializer = ToolInvocationInput(data=item)
    assert serializer.is_valid(), serializer.errors
    assert plain == [ToolInvocationInput.to_service(serializer.validated_data)]


@settings(max_examples=300, deadline=None)
@given(item=invocation_items)
def test_a_row_the_service_skips_checking_passes_full_clean(item) -> None:
    fields = {
        "invocation_id": item.get("invocationId"),
        "tool_name": item.get("toolName"),
        "kind": item.get("kind", "retrieval"),
        "status": item.get("status"),
        "match_level": item.get("matchLevel"),
        "hit_count": item.get("hitCount", 0),
        "query": item.get("query"),
        "error_message": item.get("errorMessage"),
        "duration_ms": item.get("durationMs"),
    }
    row = ToolInvocation(session_id="s", **fields)
    if _plainly_valid(row):
        row.full_clean(exclude=["session"], validate_unique=False, validate_constraints=False)


WELL_FORMED = [
    {"toolName": "QueryInternalDocsTools", "status": "SUCCESS"},
    {
        "invocationId": "c1",
        "toolName": "QueryInternalDocsTools",
        "status": "SUCCESS",
        "matchLevel": "L0",
        "hitCount": 3,
        "durationMs": 85,
        "query": "order-service 504 runbook",
    },
    {"toolName": "QueryMetricsTools", "kind": "other", "status": "SUCCESS", "durationMs": 9},
    {"toolName": "QueryInternalDocsTools", "status": "FAILED", "errorMessage": "timeout"},
]


def test_well_formed_items_take_the_shortcut_with_or_without_a_kind() -> None:
    plain = _plain_invocations(WELL_FORMED)

    assert plain is not None
    assert [item["kind"] for item in plain] == ["retrieval", "retrieval", "other", "retrieval"]
    assert all(type(item["kind"]) is str for item in plain)
    rows = [ToolInvocation(session_id="s", **item) for item in plain]
    assert all(_plainly_valid(row) for row in rows)


def test_a_row_left_to_the_field_default_kind_skips_full_clean() -> None:
    assert _plainly_valid(ToolInvocation(session_id="s", tool_name="t", status="SUCCESS"))


feedback_bodies = st.fixed_dictionaries(
    {},
    optional={
        "sessionId": near("fb-1", "a" * 64, "a" * 65, "fb 1", "", "x\n"),
        "feedback": near("useful", "not_useful", "Useful", " useful", "useful\n"),
        "extra": anything,
    },
)


@settings(max_examples=300, deadline=None)
@given(body=feedback_bodies)
def test_a_plainly_valid_feedback_body_is_exactly_what_the_serializer_returns(body) -> None:
    plain = plain_feedback(body)
    if plain is None:
        return
    serializer = FeedbackInput(data=body)
    assert serializer.is_valid(), serializer.errors
    assert plain == (serializer.validated_data["sessionId"], serializer.validated_data["feedback"])
