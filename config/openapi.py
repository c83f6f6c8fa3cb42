"""OpenAPI pieces shared by the apps' views."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from config.api import ErrorSerializer

_ERROR_DESCRIPTIONS = {
    400: "Invalid input: the body names each field and what is allowed. Nothing was written.",
    401: "Missing, unknown, expired or revoked API key.",
    403: "The API key's scope does not allow this operation.",
    404: "Not found.",
    405: "Method not allowed.",
    409: "Conflicts with the current state. Nothing was written.",
    413: "Request body larger than the configured limit.",
    415: "Body is not application/json.",
    429: "Too many requests for this API key.",
    503: "The database is unreachable; retry later.",
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
    """A postprocessing hook: drf-spectacular writes a nullable reference to an object as
    `{allOf: [{$ref}], nullable: true}`, which OpenAPI 3.0.3 reads as not nullable
    (`nullable` acts only beside a `type`; drf-spectacular issue #925), so a client that
    validates refuses the null an unscored session's `selfEvaluation` is. Such a wrapper
    becomes `oneOf: [{$ref}, NullEnum]`, the form drf-spectacular gives nullable choices."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    null = {"$ref": "#/components/schemas/NullEnum"}
    rewritten = False

    def visit(node: Any) -> None:
        nonlocal rewritten
        if isinstance(node, dict):
            parts = node.get("allOf")
            if node.get("nullable") and "type" not in node and parts and len(parts) == 1:
                del node["allOf"], node["nullable"]
                node["oneOf"] = [parts[0], null]
                rewritten = True
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result)
    if rewritten:
        schemas.setdefault("NullEnum", {"enum": [None]})
    return result
