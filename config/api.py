"""Plumbing shared by every JSON endpoint: parsing, error bodies, pagination, fields.

Every error of every /api/ endpoint, and of /api/ paths that do not exist, is one JSON
object with `"success": false` and a `message` in Chinese (the ops teams read it):
``{"success": false, "message": "请求参数无效", "code": "invalid",
"errors": {"2.matchLevel": [...]}}``. `code` is a stable English word for programs;
`errors` (400 only) names each bad field by its JSON path, with the rule it breaks.
`/api/feedback` answers in the contract's own shape, ``{"success": false, "message":
"...", "caseId": null}`` (see feedback/views.py).
"""

import datetime
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Func, QuerySet
from django.db.models.functions import Coalesce, Length
from django.http import Http404
from django.utils import timezone
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback

from config.logging import note_refusal

logger = logging.getLogger(__name__)

ALLOWED_VALUES = 'Unknown value "{input}". Allowed values: {allowed}.'
NOT_A_STRING = "Must be a string."
NOT_AN_INTEGER = "Must be an integer."
UNPAIRED_SURROGATE = "Contains an unpaired surrogate."
UNKNOWN_FIELD = "Unknown field."
INVALID_CURSOR = "Invalid cursor."
# Characters that show nothing and that str.strip() keeps (they are not whitespace): the
# zero-width space, non-joiner and joiner, the word joiner and the byte-order mark. Pasted
# or typed by a keyboard, alone they make a text that shows empty.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
NOT_WORDS = re.compile(rf"[\s{INVISIBLE}]*")


def shows_words(text: str | None) -> bool:
    """Whether a text shows anything: more than whitespace and invisible characters."""
    return bool(text) and NOT_WORDS.fullmatch(text) is None


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
        raise serializers.ValidationError(UNPAIRED_SURROGATE) from None


class StrictCharField(serializers.CharField):
    """A JSON string, nothing else: 123 or true is an error, not "123" or "True"."""

    default_error_messages = {"invalid": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        _encodable(data)
        value = super().to_internal_value(data)
        # DRF finds a text of spaces blank; one of invisible characters shows as little.
        if not self.allow_blank and not shows_words(value):
            self.fail("blank")
        return value


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: "12", 12.5 and true are errors."""

    default_error_messages = {"invalid": NOT_AN_INTEGER}

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """A JSON string holding a UUID (an integer is an error), given back as its text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


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
                raise serializers.ValidationError({key: [UNKNOWN_FIELD] for key in unknown})
        return super().to_internal_value(data)


def validated(serializer_class: type[serializers.Serializer], data: object) -> dict:
    """Validate a body that must be a JSON object."""
    if not isinstance(data, dict):
        raise serializers.ValidationError({"body": ["Expected a JSON object."]})
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# --- Errors -----------------------------------------------------------------

# What an error's `message` says when the exception brings no words of ours (DRF's own
# refusals, and the answers given outside DRF). Messages are Chinese everywhere: the
# people who read them are the ops teams; programs read `code` and `errors`.
MESSAGES = {
    "invalid": "请求参数无效",
    "parse_error": "请求体不是合法的 JSON",
    "not_authenticated": "缺少或无效的 API Key",
    "authentication_failed": "缺少或无效的 API Key",
    "permission_denied": "该 API Key 无权执行此操作",
    "not_found": "未找到所请求的资源",
    "no_such_endpoint": "接口不存在",
    "method_not_allowed": "不支持该请求方法",
    "not_acceptable": "无法按请求的 Accept 格式返回",
    "unsupported_media_type": "Content-Type 必须是 application/json",
    "payload_too_large": "请求体过大",
    "throttled": "请求过于频繁，请稍后再试",
    "server_error": "服务内部错误，已记录日志",
    "service_unavailable": "服务暂不可用，请稍后重试",
    "disallowed_host": "Host 请求头不是本服务允许的主机名（ALLOWED_HOSTS）",
    "bad_request": "请求无效",
}
# Codes only DRF itself raises, in English and with details of its own making. The others
# (authentication, permission, parsing) come with our words, more precise than the table's,
# unless DRF raised them with its default English detail.
_DRF_WORDED = frozenset(
    {"not_found", "method_not_allowed", "not_acceptable", "unsupported_media_type", "throttled"}
)


@dataclass(frozen=True)
class ApiError:
    """One error, before it is given the body shape of its endpoint."""

    status: int
    code: str
    message: str
    errors: dict[str, list[str]] | None = None
    headers: dict[str, str] = field(default_factory=dict)


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
    """The body of every API error (but /api/feedback's, whose shape is the contract's)."""
    body: dict[str, Any] = {"success": False, "message": message, "code": code}
    if errors:
        body["errors"] = errors
    return body


def api_error_of(exc: Exception) -> ApiError | None:
    """What to answer for `exc`; None for an exception that is a bug (a 500)."""
    if isinstance(exc, DomainError):
        return ApiError(exc.status_code, exc.code, exc.message)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        )
    if not isinstance(exc, exceptions.APIException):
        return None
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    if isinstance(exc, exceptions.ValidationError):
        return ApiError(
            exc.status_code, "invalid", MESSAGES["invalid"], flatten_errors(exc.detail), headers
        )
    code = exc.get_codes() if isinstance(exc.get_codes(), str) else "error"
    message = str(exc.detail)
    if code in _DRF_WORDED or message == str(exc.default_detail):
        message = MESSAGES.get(code, message)
    return ApiError(exc.status_code, code, message, headers=headers)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every handled error as error_body(); anything else re-raised (a logged 500)."""
    error = api_error_of(exc)
    if error is None:
        return None
    set_rollback()
    if error.status < 500:
        note_refusal(context["request"], f"{error.code}: {error.message}")
    return Response(
        error_body(error.code, error.message, error.errors),
        status=error.status,
        headers=error.headers,
    )


# --- Pagination -------------------------------------------------------------


class NewestFirstCursorPagination(CursorPagination):
    """Stable pages over tables that grow while they are read; no COUNT(*)."""

    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = "-id"
    # The text columns that make a row long (a session's answer: up to the 4 MiB a body
    # may hold). A page holds rows until their characters in these pass
    # page_max_characters, at least one row, and `next` (or `previous`) goes on from there:
    # 200 rows of 4 MB answers would be an 800 MB page built in one worker.
    long_fields: tuple[str, ...] = ()
    page_max_characters = 8_000_000

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: APIView | None = None
    ) -> list | None:
        # decode_cursor() checks the cursor's position against the model's ordering field.
        self.model = queryset.model
        self._fitting: int | None = None
        if self.long_fields:
            # The page's rows, their long text left unread, tell how many fit; the page
            # is then read whole, that many rows long (a page as a smaller `limit` gives).
            sized = queryset.defer(*self.long_fields).annotate(_characters=self._characters())
            rows = super().paginate_queryset(sized, request, view) or []
            if self.cursor is not None and self.cursor.reverse:
                rows = rows[::-1]  # `previous` reads from the row nearest its cursor
            self._fitting = _rows_within(
                [row._characters for row in rows], self.page_max_characters
            )
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request: Request) -> int:
        page_size = super().get_page_size(request)
        return page_size if self._fitting is None else min(page_size, self._fitting)

    def _characters(self) -> Func:
        lengths = [Coalesce(Length(name), 0) for name in self.long_fields]
        return sum(lengths[1:], lengths[0])

    def decode_cursor(self, request: Request) -> Cursor | None:
        # A cursor the client mangled is bad input (400), not a missing page (404), and
        # not a 500 from the query its position would be put in.
        try:
            cursor = super().decode_cursor(request)
        except exceptions.NotFound:
            raise exceptions.ValidationError({"cursor": [INVALID_CURSOR]}) from None
        if cursor is not None and not self._is_position(cursor.position):
            raise exceptions.ValidationError({"cursor": [INVALID_CURSOR]})
        return cursor

    def _is_position(self, position: str | None) -> bool:
        """Whether `position` is absent, or a value of the ordering field as this paginator
        writes one (the str() of a value read from the database)."""
        if position is None:
            return True
        ordering_field = self.model._meta.get_field(self.ordering[0].lstrip("-"))
        try:
            value = ordering_field.clean(position, None)
        except DjangoValidationError:
            return False
        if isinstance(value, datetime.datetime):
            # Times come back from the database aware. A naive one would be guessed in the
            # server's zone, and one UTC cannot hold (9999-12-31 23:59-14:00) fails in the
            # query.
            if timezone.is_naive(value):
                return False
            try:
                value.astimezone(datetime.UTC)
            except OverflowError:
                return False
        return True


def _rows_within(characters: list[int], budget: int) -> int:
    """How many of the rows, in order, fit in `budget` characters: at least one."""
    total = 0
    for count, length in enumerate(characters):
        total += length
        if total > budget:
            return max(count, 1)
    return max(len(characters), 1)


class PageParameters(StrictInputSerializer):
    """The query string of a paginated list; anything unknown in it is an error."""

    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=200)


class ErrorSerializer(serializers.Serializer):
    """The body of every error response (except /api/feedback's, fixed by the contract)."""

    success = serializers.BooleanField(help_text="Always false.")
    message = serializers.CharField(help_text="What went wrong, in Chinese, for people.")
    code = serializers.CharField(
        help_text="A stable word for programs: invalid, not_found, conflict, throttled, ..."
    )
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='400 only: field path -> messages, e.g. {"3.matchLevel": [...]}',
    )
