"""OpenAPI pieces shared by the apps' views."""

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
