"""Plumbing shared by every JSON endpoint: parsing, error bodies, pagination, fields.

Error bodies of the ingest and read endpoints look like
``{"code": "invalid", "message": "...", "errors": {"toolInvocations.3.matchLevel": [...]}}``;
`/api/feedback` keeps the contract's own shape (see feedback/views.py).
"""

import logging
from functools import cache
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, serializers, status
from rest_framework.fields import empty
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import set_rollback

logger = logging.getLogger(__name__)

ALLOWED_VALUES = 'Unknown value "{input}". Allowed values: {allowed}.'


class DomainError(Exception):
    """A request that is well-formed but cannot be carried out (404 or 409)."""

    status_code = status.HTTP_409_CONFLICT
    code = "conflict"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(DomainError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class Conflict(DomainError):
    pass


# --- Fields -----------------------------------------------------------------


def _encodable(value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise serializers.ValidationError("Contains an unpaired surrogate.") from None


class StrictCharField(serializers.CharField):
    """A JSON string, nothing else: 123 or true is an error, not "123" or "True"."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        _encodable(data)
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: "12", 12.5 and true are errors."""

    default_error_messages = {"invalid": "Must be an integer."}

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """One of the allowed strings, exactly; the error lists them."""

    def __init__(self, choices: Any, **kwargs: Any) -> None:
        super().__init__(choices, **kwargs)
        allowed = ", ".join(str(value) for value in self.choices)
        self.error_messages["invalid_choice"] = ALLOWED_VALUES.replace("{allowed}", allowed)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class StrictInputSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo ("match_level") is an error, not a no-op."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


def validated(serializer_class: type[serializers.Serializer], data: object) -> dict:
    """Validate a body that must be a JSON object."""
    if not isinstance(data, dict):
        raise serializers.ValidationError({"body": ["Expected a JSON object."]})
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def plainly_valid(serializer_class: type[serializers.Serializer], data: object) -> dict | None:
    """What `serializer_class(data=data).validated_data` would be, for data it accepts as
    it is; None for anything else, which the caller then hands to the serializer itself
    (for its exact errors, or an acceptance after normalising).

    The rules stay where they are declared, once: the serializer's fields (type, length,
    range, choices, null, blank, default and the fields' own validators) and its
    `validate()`. This reads them without DRF's machinery around them, which costs more
    than the work of the hot paths that use it (in process: a batch of 100 tool
    invocations 4.9 ms through the serializer, 1.25 ms here; a feedback body 0.11 ms
    against 0.006 ms).
    """
    if not isinstance(data, dict):
        return None
    fields, serializer = _plain_fields(serializer_class)
    if fields is None:
        return None
    if issubclass(serializer_class, StrictInputSerializer) and not data.keys() <= fields.keys():
        return None
    attrs: dict[str, Any] = {}
    for name, field in fields.items():
        if name not in data:
            if field.required:
                return None
            if field.default is not empty:
                attrs[name] = field.get_default()
            continue
        value = data[name]
        if value is None:
            if not field.allow_null:
                return None
            attrs[name] = None
        elif not _plain_value(field, value):
            return None
        else:
            attrs[name] = value
    try:
        return serializer.validate(attrs)
    except serializers.ValidationError:
        return None


def plainly_valid_many(
    serializer_class: type[serializers.Serializer], items: list
) -> list[dict] | None:
    """`plainly_valid` for every item of a list; None unless all of them are."""
    out = []
    for item in items:
        attrs = plainly_valid(serializer_class, item)
        if attrs is None:
            return None
        out.append(attrs)
    return out


@cache
def _plain_fields(
    serializer_class: type[serializers.Serializer],
) -> tuple[dict[str, serializers.Field] | None, serializers.Serializer]:
    """The serializer's fields, if each is of a kind `_plain_value` knows and none has a
    `validate_<field>` method of the serializer's own."""
    serializer = serializer_class()
    fields = dict(serializer.fields)
    known = all(
        isinstance(
            field, serializers.CharField | serializers.IntegerField | serializers.ChoiceField
        )
        and not field.read_only
        and not field.source_attrs[:-1]
        and field.source == name
        and not hasattr(serializer, f"validate_{name}")
        for name, field in fields.items()
    )
    return (fields if known else None), serializer


def _plain_value(field: serializers.Field, value: object) -> bool:
    """`value` is what the field would return for it, and its validators accept it."""
    if isinstance(field, serializers.ChoiceField):
        return type(value) is str and value in field.choices
    if isinstance(field, serializers.IntegerField):
        if type(value) is not int:
            return False
    elif isinstance(field, serializers.CharField):
        if type(value) is not str:
            return False
        if value == "" or (field.trim_whitespace and value != value.strip()):
            return False  # blank or trimmed: the field decides
        try:
            value.encode("utf-8")  # no unpaired surrogates
        except UnicodeEncodeError:
            return False
    try:
        for validator in field.validators:
            validator(value)
    except (serializers.ValidationError, DjangoValidationError):
        return False
    return True


# --- Errors -----------------------------------------------------------------


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error structure as {"path.to.field": [messages]}."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            flat.update(flatten_errors(value, path))
        return flat
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return {prefix or "body": [str(item) for item in detail]} if detail else {}
        flat = {}
        for index, item in enumerate(detail):
            flat.update(flatten_errors(item, f"{prefix}.{index}" if prefix else str(index)))
        return flat
    return {prefix or "body": [str(detail)]}


def error_body(code: str, message: str, errors: dict[str, list[str]] | None = None) -> dict:
    body: dict[str, Any] = {"code": code, "message": message}
    if errors:
        body["errors"] = errors
    return body


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every handled error as {"code", "message", "errors"?}; anything else re-raised."""
    if isinstance(exc, DomainError):
        set_rollback()
        return Response(error_body(exc.code, exc.message), status=exc.status_code)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        )
    if not isinstance(exc, exceptions.APIException):
        return None
    set_rollback()
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    if isinstance(exc, exceptions.ValidationError):
        body = error_body("invalid", "The request has invalid fields.", flatten_errors(exc.detail))
    else:
        body = error_body(
            exc.get_codes() if isinstance(exc.get_codes(), str) else "error", str(exc.detail)
        )
    return Response(body, status=exc.status_code, headers=headers)


def json_error(status_code: int, code: str, message: str) -> JsonResponse:
    """An error answered outside DRF (middleware, URL resolution)."""
    return JsonResponse(error_body(code, message), status=status_code)


# --- Pagination -------------------------------------------------------------


class NewestFirstCursorPagination(CursorPagination):
    """Stable pages over tables that grow while they are read; no COUNT(*)."""

    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = "-id"

    def decode_cursor(self, request):  # type: ignore[no-untyped-def]
        # A cursor the client mangled is bad input (400), not a missing page (404).
        try:
            return super().decode_cursor(request)
        except exceptions.NotFound:
            raise exceptions.ValidationError({"cursor": ["Invalid cursor."]}) from None


class PageParameters(StrictInputSerializer):
    """The query string of a paginated list; anything unknown in it is an error."""

    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=200)


class ErrorSerializer(serializers.Serializer):
    """The body of every error response (except /api/feedback's own shape)."""

    code = serializers.CharField()
    message = serializers.CharField()
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='Field path -> messages, e.g. {"toolInvocations.3.matchLevel": [...]}',
    )
