"""The request parser for every API endpoint.

Kept apart from config/api.py: DRF imports parsers named in settings while its views
module loads, so this module must not import rest_framework.views.
"""

import json

from rest_framework import exceptions
from rest_framework.parsers import JSONParser


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


class NumberTooLong(ValueError):
    """A JSON integer of more digits than Python reads (sys.get_int_max_str_digits())."""


def json_int(digits: str) -> int:
    """json's parse_int: an integer of thousands of digits is refused in the API's words,
    not in Python's (which tell the reader to call sys.set_int_max_str_digits())."""
    try:
        return int(digits)
    except ValueError:
        raise NumberTooLong(f"请求体中的数字过长（{len(digits.lstrip('-'))} 位）") from None


class StrictJSONParser(JSONParser):
    """JSON only: no NaN/Infinity, and deep nesting is a 400, not a crash."""

    def parse(self, stream, media_type=None, parser_context=None):  # type: ignore[no-untyped-def]
        parser_context = parser_context or {}
        request = parser_context.get("request")
        coding = request.META.get("HTTP_CONTENT_ENCODING", "") if request is not None else ""
        if coding.strip().lower() not in ("", "identity"):
            # Only /v1/traces takes a compressed body; here json would read the bytes.
            raise exceptions.UnsupportedMediaType(
                media_type or "",
                detail=f"不支持 Content-Encoding: {coding.strip()}：请发送未压缩的 JSON 请求体",
                code="unsupported_content_encoding",
            )
        encoding = parser_context.get("encoding", "utf-8")
        try:
            text = stream.read().decode(encoding)
            return json.loads(text, parse_constant=_reject_constant, parse_int=json_int)
        except RecursionError:
            raise exceptions.ParseError("请求体不是合法的 JSON：嵌套层数过深") from None
        except NumberTooLong as exc:
            raise exceptions.ParseError(str(exc)) from None
        except ValueError as exc:
            # UnicodeDecodeError is a ValueError too: invalid UTF-8 lands here.
            raise exceptions.ParseError(f"请求体不是合法的 JSON：{exc}") from None
