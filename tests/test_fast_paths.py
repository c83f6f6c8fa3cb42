"""The tool-invocation validator, which the API runs without DRF's field machinery (too
slow for batches of hundreds), refuses and keeps exactly what ToolInvocationInput's field
declarations would under DRF, word for word: the schema and the validator agree."""

import pytest
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from config.api import StrictInputSerializer
from diagnosis.serializers import (
    ToolInvocationInput,
    match_level_problem,
    tool_invocation_checked,
    tool_invocations_checked,
)

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


class DeclaredFields(ToolInvocationInput):
    """ToolInvocationInput as DRF's own fields would validate it."""

    def to_internal_value(self, data):  # type: ignore[no-untyped-def]
        return StrictInputSerializer.to_internal_value(self, data)

    def validate(self, attrs):  # type: ignore[no-untyped-def]
        problem = match_level_problem(
            status=attrs["status"], kind=attrs["kind"], match_level=attrs.get("matchLevel")
        )
        if problem:
            raise serializers.ValidationError({"matchLevel": [problem]})
        return attrs


def as_facts(attrs: dict) -> dict:
    return {
        "invocation_id": attrs.get("invocationId"),
        "tool_name": attrs["toolName"],
        "kind": attrs["kind"],
        "status": attrs["status"],
        "match_level": attrs.get("matchLevel"),
        "hit_count": attrs["hitCount"],
        "query": attrs.get("query"),
        "error_message": attrs.get("errorMessage"),
        "duration_ms": attrs.get("durationMs"),
    }


def words(detail: dict) -> dict:
    return {name: [str(message) for message in messages] for name, messages in detail.items()}


@settings(max_examples=500, deadline=None)
@given(item=invocation_items)
def test_the_validator_keeps_and_refuses_what_the_declared_fields_would(item) -> None:
    reference = DeclaredFields(data=item)
    with translation.override("en"):
        accepted = reference.is_valid()
        try:
            checked = tool_invocation_checked(item)
        except serializers.ValidationError as exc:
            assert not accepted, exc.detail
            assert words(exc.detail) == words(reference.errors)
        else:
            assert accepted, reference.errors
            assert checked == as_facts(reference.validated_data)


def test_a_well_formed_item_is_kept_as_sent_with_the_defaults_filled_in() -> None:
    checked = tool_invocations_checked({"toolName": "QueryInternalDocsTools", "status": "SUCCESS"})

    assert checked == [
        {
            "invocation_id": None,
            "tool_name": "QueryInternalDocsTools",
            "kind": "retrieval",
            "status": "SUCCESS",
            "match_level": None,
            "hit_count": 0,
            "query": None,
            "error_message": None,
            "duration_ms": None,
        }
    ]
    assert type(checked[0]["kind"]) is str


def test_a_bad_item_in_a_list_is_named_by_its_place() -> None:
    good = {"toolName": "t", "status": "SUCCESS"}

    with translation.override("en"), pytest.raises(serializers.ValidationError) as error:
        tool_invocations_checked([good, good, {**good, "hitCount": -1, "kind": "tool"}])

    assert [words(item) for item in error.value.detail] == [
        {},
        {},
        {
            "kind": ['Unknown value "tool". Allowed values: retrieval, other.'],
            "hitCount": ["Ensure this value is greater than or equal to 0."],
        },
    ]


def test_the_serializer_validates_with_the_same_function() -> None:
    serializer = ToolInvocationInput(data={"toolName": " t ", "status": "FAILED", "query": " "})

    assert serializer.is_valid()
    assert serializer.validated_data == tool_invocation_checked(
        {"toolName": "t", "status": "FAILED", "query": ""}
    )
