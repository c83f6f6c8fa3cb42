"""Feedback tokens: what a browser sends instead of an API key to rate one answer.

A token is Django's signing (SECRET_KEY, a salt of its own) over one sessionId with the
time it was made: no table, no new secret. It is good for nothing but POST /api/feedback
for that one session, for FEEDBACK_TOKEN_MAX_AGE seconds. The agent's back end gets it
in the `complete` response (and from GET /api/sessions/{id}) and hands it to the page
that shows the answer; when that one has expired, the chat front end's back end, whose
key may only send feedback, gets a fresh one from POST /api/sessions/{id}/feedback-token.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core import signing

from diagnosis.exceptions import SessionNotFound
from diagnosis.models import DiagnosisSession

# A salt of its own: a value signed for any other purpose (a session cookie, a password
# reset) is never a feedback token, and a feedback token is nothing else.
SALT = "diagnosis.feedback-token"


class FeedbackTokenInvalid(Exception):
    """Tampered, made with another secret, or not a token at all."""


class FeedbackTokenExpired(FeedbackTokenInvalid):
    """Genuine, but older than FEEDBACK_TOKEN_MAX_AGE."""


def feedback_token_for(*, session_id: str) -> str:
    """A token that lets its holder rate this session, and only this session."""
    return signing.dumps(session_id, salt=SALT, compress=False)


@dataclass(frozen=True)
class IssuedFeedbackToken:
    session_id: str
    token: str
    expires_in: int  # seconds


def feedback_token_issue(*, session_id: str) -> IssuedFeedbackToken:
    """A fresh token for an existing session; SessionNotFound for an unknown one.

    Whatever the session's state: POST /api/feedback refuses what it must (a session
    still running is 409 there), in the words the page shows the reader.
    """
    if not DiagnosisSession.objects.filter(session_id=session_id).exists():
        raise SessionNotFound(session_id)
    return IssuedFeedbackToken(
        session_id=session_id,
        token=feedback_token_for(session_id=session_id),
        expires_in=settings.FEEDBACK_TOKEN_MAX_AGE,
    )


def feedback_token_session(*, token: str) -> str:
    """The sessionId the token was made for; raises when it is not usable."""
    try:
        session_id = signing.loads(token, salt=SALT, max_age=settings.FEEDBACK_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise FeedbackTokenExpired() from None
    except (signing.BadSignature, ValueError, UnicodeDecodeError):
        raise FeedbackTokenInvalid() from None
    if not isinstance(session_id, str):
        raise FeedbackTokenInvalid()
    return session_id
