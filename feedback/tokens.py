"""`Authorization: Feedback <token>` on POST /api/feedback: the browser's credential.

The token (diagnosis/feedback_tokens.py) names one session; the view refuses it for any
other, and for a later session that took the same sessionId. Requests with a token are
rate-limited per token and per client address, on top of nothing else: a page has no API
key to count by. The address limit is checked first, before the token: forged and expired
tokens count there too.
"""

from dataclasses import dataclass

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from config.logging import tag_caller
from config.throttling import WindowCountThrottle
from diagnosis.apikeys import KEYWORD as API_KEY_KEYWORD
from diagnosis.feedback_tokens import (
    FeedbackTokenClaims,
    FeedbackTokenExpired,
    FeedbackTokenInvalid,
    feedback_token_fits_session,
    feedback_token_read,
)
from diagnosis.models import ApiKey, ApiPermission
from feedback.body import CREDENTIAL_IN_BODY, TOKEN_BODY_KEYS

KEYWORD = "Feedback"
FORGED = "反馈令牌无效"
EXPIRED = "反馈令牌已过期，请刷新页面后重试"
OTHER_SESSION = "该反馈令牌不属于此会话"
BOTH_CREDENTIALS = "只能使用一种凭据：Authorization: Feedback <token> 或 Api-Key <key>"
KEY_NOT_ALLOWED = "该 API Key 无权提交反馈"
# Every 401 of POST /api/feedback: a missing header, another scheme, an unknown, revoked or
# expired key. It names both ways in, since a page holds a token and a back end a key.
NO_CREDENTIAL = (
    f"缺少或无效的凭据：请求头应为 'Authorization: {API_KEY_KEYWORD} <key>'"
    f" 或 'Authorization: {KEYWORD} <token>'"
)


class TokenRefused(exceptions.PermissionDenied):
    """403 with our own words: the contract's body keeps the message as given."""

    default_code = "feedback_token_refused"


class TwoCredentials(exceptions.ParseError):
    default_code = "two_credentials"


@dataclass(frozen=True)
class FeedbackToken:
    """A verified token: who may rate which session (request.auth)."""

    token: str
    session_id: str
    claims: FeedbackTokenClaims


@dataclass(frozen=True)
class TokenHolder:
    """The reader holding a token (request.user); not a Django user."""

    session_id: str
    is_authenticated: bool = True
    is_anonymous: bool = False

    def __str__(self) -> str:
        return f"feedback-token:{self.session_id}"


def _schemes(header: str) -> set[str]:
    # Two Authorization headers reach Django joined by a comma.
    return {part.strip().partition(" ")[0].lower() for part in header.split(",") if part.strip()}


class FeedbackTokenAuthentication(BaseAuthentication):
    """Takes `Feedback <token>`; leaves every other header to the API-key check."""

    def authenticate(self, request: Request) -> tuple[TokenHolder, FeedbackToken] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        schemes = _schemes(header)
        if KEYWORD.lower() not in schemes:
            return None
        address_limit = FeedbackAddressThrottle()
        if not address_limit.allow_request(request, None):
            raise exceptions.Throttled(wait=address_limit.wait())
        if len(schemes) > 1 or "," in header:
            raise TwoCredentials(BOTH_CREDENTIALS)
        token = header.strip().partition(" ")[2].strip()
        try:
            claims = feedback_token_read(token=token)
        except FeedbackTokenExpired:
            raise TokenRefused(EXPIRED) from None
        except FeedbackTokenInvalid:
            raise TokenRefused(FORGED) from None
        tag_caller("feedback-token")
        return TokenHolder(claims.session_id), FeedbackToken(
            token=token, session_id=claims.session_id, claims=claims
        )

    def authenticate_header(self, request: Request) -> str:
        return API_KEY_KEYWORD


class KeyOrTokenMayGiveFeedback(BasePermission):
    """A key whose scope allows feedback, or a valid token (checked against the body's
    sessionId by the view, once the body is validated)."""

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, FeedbackToken):
            return True
        if not isinstance(request.auth, ApiKey):
            if _token_in_body(request):
                raise TwoCredentials(CREDENTIAL_IN_BODY)
            raise exceptions.NotAuthenticated(NO_CREDENTIAL)
        if not request.auth.allows(ApiPermission.FEEDBACK):
            raise exceptions.PermissionDenied(KEY_NOT_ALLOWED)
        return True


def _token_in_body(request: Request) -> bool:
    """A page that put its token in the body instead of the header: say so, rather than
    ask for a key it does not have."""
    try:
        data = request.data
    except exceptions.APIException:  # not JSON, or not parseable: no token there
        return False
    return isinstance(data, dict) and any(key in data for key in TOKEN_BODY_KEYS)


def check_token_session(request: Request, session_id: str) -> None:
    """A token rates its own session only: not another one, nor a session that took the
    same sessionId after the token's was purged."""
    if not isinstance(request.auth, FeedbackToken):
        return
    if request.auth.session_id != session_id:
        raise TokenRefused(OTHER_SESSION)
    if not feedback_token_fits_session(claims=request.auth.claims):
        raise TokenRefused(OTHER_SESSION)


class FeedbackTokenThrottle(WindowCountThrottle):
    """Per token: one reader clicking, not a script replaying a leaked token."""

    scope = "feedback-token"

    def get_rate(self) -> str | None:
        return settings.FEEDBACK_TOKEN_RATE_LIMIT

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if not isinstance(request.auth, FeedbackToken):
            return None
        # The signature part identifies the token and is short.
        return self.cache_format % {
            "scope": self.scope,
            "ident": request.auth.token.rpartition(":")[2],
        }


# Set on a request once its address is counted: the verdict given then.
_ADDRESS_VERDICT = "_feedback_address_allowed"


class FeedbackAddressThrottle(WindowCountThrottle):
    """Per client address (config.client_address: a forwarded one only when it is an IP
    address), for every request that shows a token, good or not: many tokens from one
    place, or a script trying forged ones. Counted once, when the token is read
    (FeedbackTokenAuthentication), before it is checked."""

    scope = "feedback-address"

    def get_rate(self) -> str | None:
        return settings.FEEDBACK_ADDRESS_RATE_LIMIT

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if KEYWORD.lower() not in _schemes(request.META.get("HTTP_AUTHORIZATION", "")):
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def allow_request(self, request: Request, view: object) -> bool:
        # DRF asks again with the view's throttles, after the permissions: the verdict
        # given when the token was read stands, and the request is not counted twice.
        verdict = getattr(request, _ADDRESS_VERDICT, None)
        if verdict is None:
            verdict = super().allow_request(request, view)
            setattr(request, _ADDRESS_VERDICT, verdict)
        return verdict


class FeedbackTokenScheme(OpenApiAuthenticationExtension):
    """The token in the OpenAPI schema, beside the API key."""

    target_class = "feedback.tokens.FeedbackTokenAuthentication"
    name = "FeedbackToken"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "`Feedback <token>`: the session's `feedbackToken` (from `complete`), for "
                "POST /api/feedback of that session only."
            ),
        }
