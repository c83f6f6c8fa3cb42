"""The REST API's settings: Django REST framework's and the OpenAPI schema's. Read by
config/settings.py with a `*` import, after config/security_settings.py (the client
address's proxy count comes from there).
"""

from config.security_settings import TRUSTED_PROXY_COUNT as _TRUSTED_PROXY_COUNT

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["config.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.StrictJSONParser"],
    "EXCEPTION_HANDLER": "config.api.api_exception_handler",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The per-address feedback limit reads the client's address through this.
    "NUM_PROXIES": _TRUSTED_PROXY_COUNT,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Diagnosis evidence & feedback API",
    "DESCRIPTION": (
        "Agents report diagnosis sessions, tool-invocation facts and answers; end users "
        "give feedback; the case library is read back. Every endpoint needs "
        "`Authorization: Api-Key <key>`. Every response carries `X-Request-ID`; the "
        "service's log lines about the request carry the same id."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The default hook, then ours: nullable object references that 3.0.3 reads as nullable;
    # the errors every operation can give (503 and Retry-After, 401/403/429 by its view);
    # X-Request-ID on each of their responses (last: on the added errors too).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.nullable_references_typed",
        "config.openapi.responses_every_operation_can_give",
        "config.openapi.request_id_on_every_operation",
    ],
    "ENUM_NAME_OVERRIDES": {
        "SessionStatusEnum": "diagnosis.models.SessionStatus",
        "OutcomeEnum": "diagnosis.models.InvocationStatus",
        # A tool call's level (L0, L1, NONE), apart from a case search's of the same names.
        "InvocationMatchLevelEnum": "diagnosis.models.MatchLevel",
    },
}
