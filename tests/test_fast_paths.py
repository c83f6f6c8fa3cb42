"""The hot paths' shortcut (`config.api.plainly_valid`, which reads a serializer's own
fields and `validate()`) accepts nothing the serializer would refuse, and hands on exactly
what it would. Feedback and tool-invocation bodies that are plainly valid skip DRF's
machinery, which costs more than storing the rows."""

from hypothesis import given, settings
from hypothesis import strategies as st

from config.api import plainly_valid, plainly_valid_many
from diagnosis.serializers import ToolInvocationInput
from feedback.serializers import FeedbackInput

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
    plain = plainly_valid(ToolInvocationInput, item)
    if plain is None:
        return
    serializer = ToolInvocationInput(data=item)
    assert serializer.is_valid(), serializer.errors
    assert plain == serializer.validated_data


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
    plain = plainly_valid_many(ToolInvocationInput, WELL_FORMED)

    assert plain is not None
    assert [item["kind"] for item in plain] == ["retrieval", "retrieval", "other", "retrieval"]


def test_an_item_the_serializer_would_refuse_or_normalise_is_left_to_it() -> None:
    assert plainly_valid(ToolInvocationInput, {"toolName": " t", "status": "SUCCESS"}) is None
    assert (
        plainly_valid(
            ToolInvocationInput, {"toolName": "t", "status": "FAILED", "matchLevel": "L0"}
        )
        is None
    )
    assert plainly_valid_many(ToolInvocationInput, [*WELL_FORMED, {"status": "SUCCESS"}]) is None


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
    plain = plainly_valid(FeedbackInput, body)
    if plain is None:
        return
    serializer = FeedbackInput(data=body)
    assert serializer.is_valid(), serializer.errors
    assert plain == serializer.validated_data
