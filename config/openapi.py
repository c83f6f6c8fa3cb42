"""OpenAPI pieces shared by the apps' views."""

import copy
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from config import request_id
from config.api import ErrorSerializer

_ERROR_DESCRIPTIONS = {
    400: "Invalid input: the body names each field and what is allowed. Nothing was written.",
    401: "Missing, unknown, expired or revoked API key.",
    403: "The API key's scope does not allow this operation.",
    404: "Not found.",
    405: "Method not allowed: `Allow` lists the methods this path takes.",
    409: "Conflicts with the current state. Nothing was written.",
    413: "Request body larger than the configured limit.",
    415: (
        "The body is not uncompressed JSON: its `Content-Type` is not application/json "
        "(code `unsupported_media_type`), or it has a `Content-Encoding` "
        "(`unsupported_content_encoding`). Nothing was written."
    ),
    429: "Too many requests for this API key.",
    503: (
        "The database or the cache (Redis) cannot be reached: the request can be sent again "
        "after `Retry-After` seconds."
    ),
}

_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before sending the request again.",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }
}
_ALLOW = {
    "Allow": {
        "description": "The methods this path takes.",
        "required": True,
        "schema": {"type": "string"},
    }
}
_OPERATIONS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

_REQUEST_ID_HEADER = {
    "description": (
        "The request's id, also on every log line written while it was handled: the one "
        "sent, when sane, else a new one (32 hex digits)."
    ),
    "required": True,
    "schema": {"type": "string", "pattern": f"^{request_id.SANE_ID}$"},
}
# Not refused when insane (replaced, the request goes on): the schema says only "string".
_REQUEST_ID_PARAMETER = {
    "name": request_id.HEADER,
    "in": "header",
    "required": False,
    "description": (
        "An id to find this request by in the service's logs; sent back as is when it is 1 "
        "to 128 of `A-Za-z0-9._:-`, else replaced by a new one."
    ),
    "schema": {"type": "string"},
}


def error_responses(*codes: int, serializer: type = ErrorSerializer) -> dict[int, OpenApiResponse]:
    return {
        code: OpenApiResponse(response=serializer, description=_ERROR_DESCRIPTIONS[code])
        for code in codes
    }


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "diagnosis.apikeys.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`; create keys with `manage.py create_api_key`.",
        }


def nullable_references_typed(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """A postprocessing hook: nullable references in the forms client generators read.

    - A nullable object stays drf-spectacular's `{allOf: [{$ref}], nullable: true}`, which
      generators read as "the object or null". OpenAPI 3.0.3 reads `nullable` only beside
      a `type` (drf-spectacular issue #925), so a validating client would refuse the null
      an unscored session's `selfEvaluation` is; an object referred to only that way is
      therefore nullable itself, which changes nothing else.
    - A nullable choice, which drf-spectacular's enum hook makes `oneOf: [{$ref: XEnum},
      {$ref: NullEnum}]` (an enum of null a generator makes a truthy member of), becomes
      the typed enum it was: `{type, enum: [..., null], nullable: true}`.

    NullEnum, and an enum component no longer referred to, leave the schema."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    null_ref = "#/components/schemas/NullEnum"
    inlined: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            choices = node.get("oneOf")
            if choices and len(choices) == 2 and choices[1] == {"$ref": null_ref}:
                name = choices[0]["$ref"].rsplit("/", 1)[-1]
                enum = schemas[name]
                del node["oneOf"]
                node.update(type=enum["type"], enum=[*enum["enum"], None], nullable=True)
                inlined.add(name)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result)
    nullable, plain = _references(result)
    for name in nullable - plain:
        if schemas.get(name, {}).get("type") == "object":
            schemas[name]["nullable"] = True
    for name in {"NullEnum"} | (inlined - nullable - plain):
        schemas.pop(name, None)
    return result


def _references(node: Any) -> tuple[set[str], set[str]]:
    """The components referred to by a nullable `allOf` wrapper, and those referred to
    otherwise."""
    nullable: set[str] = set()
    plain: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            parts = node.get("allOf")
            if node.get("nullable") and parts and len(parts) == 1 and "$ref" in parts[0]:
                nullable.add(parts[0]["$ref"].rsplit("/", 1)[-1])
                rest = {key: value for key, value in node.items() if key != "allOf"}
                visit(rest)
                return
            if isinstance(node.get("$ref"), str):
                plain.add(node["$ref"].rsplit("/", 1)[-1])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(node)
    return nullable, plain


def responses_every_operation_can_give(
    result: dict, generator: Any, request: Any, public: bool
) -> dict:
    """A postprocessing hook: the error responses an operation gives whatever its view
    does, documented here once instead of in each view's `extend_schema`.

    - 503 on every /api/ operation: config.middleware.DatabaseUnavailableMiddleware
      answers it to any request when the database or the cache cannot be reached (every
      request reads the cache for its API key).
    - 401, 403 and 429 on an operation whose view authenticates, checks permissions or
      throttles, when its `extend_schema` did not document them already.
    - 405 on every /api/ POST operation: its path answers a method it does not take
      (PUT, DELETE, ...), with the `Allow` header on every 405.
    - 415 on every /api/ operation with a request body: the JSON parser refuses a body
      of another Content-Type, or a compressed one (config/parsers.py). An operation
      without a body never reads one, and never answers 415.
    - The `Retry-After` header on every 429 and 503.

    It also marks each /api/ operation's request body required: every operation that
    reads one answers 400 to a request without it (a `PolymorphicProxySerializer` or a
    body given as a schema is not marked so by drf-spectacular).

    An added response has the body of the operation's other errors: the middleware and
    the exception handlers both answer in the endpoint's own error shape (the feedback
    contract's on /api/feedback).
    """
    endpoints = getattr(generator, "endpoints", None) or []
    views = {(path, method.lower()): callback.cls for path, _, method, callback in endpoints}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in _OPERATIONS:
                continue
            if path.startswith("/api/") and "requestBody" in operation:
                operation["requestBody"]["required"] = True
            responses = operation.setdefault("responses", {})
            content = _error_content(responses)
            for code in _errors_of(path, method, operation, views.get((path, method))):
                responses.setdefault(
                    str(code),
                    {"description": _ERROR_DESCRIPTIONS[code], "content": copy.deepcopy(content)},
                )
            for code, header in (("405", _ALLOW), ("429", _RETRY_AFTER), ("503", _RETRY_AFTER)):
                if code in responses:
                    responses[code].setdefault("headers", {}).update(copy.deepcopy(header))
    return result


def _errors_of(path: str, method: str, operation: dict, view: Any) -> list[int]:
    codes = []
    if path.startswith("/api/"):
        codes.append(503)
        if method == "post":
            codes.append(405)
        if "requestBody" in operation:
            codes.append(415)
    if view is not None:
        if getattr(view, "authentication_classes", None):
            codes.append(401)
        if getattr(view, "permission_classes", None):
            codes.append(403)
        if getattr(view, "throttle_classes", None):
            codes.append(429)
    return codes


def _error_content(responses: dict) -> dict:
    """The body of the operation's documented errors; the common one when it has none."""
    for code in sorted(responses):
        if code.startswith("4") and "content" in responses[code]:
            return responses[code]["content"]
    return {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def request_id_on_every_operation(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """A postprocessing hook: config.request_id answers every request with X-Request-ID
    and takes a sane one the client sent, so every response of every operation declares
    the header, and every operation the optional request header."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _OPERATIONS:
                continue
            parameters = operation.setdefault("parameters", [])
            if not any(
                p.get("in") == "header" and p.get("name", "").lower() == request_id.HEADER.lower()
                for p in parameters
            ):
                parameters.append(copy.deepcopy(_REQUEST_ID_PARAMETER))
            for response in operation.get("responses", {}).values():
                headers = response.setdefault("headers", {})
                headers.setdefault(request_id.HEADER, copy.deepcopy(_REQUEST_ID_HEADER))
    return result
