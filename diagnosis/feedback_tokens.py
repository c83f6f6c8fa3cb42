"""Feedback tokens: what a browser sends instead of an API key to rate one answer.

A token is Django's signing (SECRET_KEY, a salt of its own) over one sessionId and the
session's row (its primary key), with the time it was made: no table, no new secret. It
is good for nothing but POST /api/feedback for that one session, for
FEEDBACK_TOKEN_MAX_AGE seconds, and not for a later session that took the same sessionId
after the first was purged. The agent's back end gets it in the `complete` response (and
from GET /api/sessions/{id}) and hands it to the page that shows the answer; when that
one has expired, the chat front end's back end, whose key may only send feedback, gets a
fresh one from POST /api/sessions/{id}/feedback-token.
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


@dataclass(frozen=True)
class FeedbackTokenClaims:
    """What a genuine token says: the session and its row.

    A token without the row (`session_pk` None) was made before tokens named it, or by a
    caller that did not pass it: it rates the sessionId, whichever row holds it, until it
    expires, as tokens always did. Those made before the change are all gone
    FEEDBACK_TOKEN_MAX_AGE after it.
    """

    session_id: str
    session_pk: int | None


def feedback_token_for(*, session_id: str, session_pk: int | None = None) -> str:
    """A token that lets its holder rate this session, and only this session. Give the
    row's `session_pk` whenever it is at hand: without it the token is not bound to the
    row (FeedbackTokenClaims)."""
    payload: str | list = session_id if session_pk is None else [session_id, session_pk]
    return signing.dumps(payload, salt=SALT, compress=False)


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
    session_pk = (
        DiagnosisSession.objects.filter(session_id=session_id).values_list("pk", flat=True).first()
    )
    if session_pk is None:
        raise SessionNotFound(session_id)
    return IssuedFeedbackToken(
        session_id=session_id,
        token=feedback_token_for(session_id=session_id, session_pk=session_pk),
        expires_in=settings.FEEDBACK_TOKEN_MAX_AGE,
    )


def feedback_token_read(*, token: str) -> FeedbackTokenClaims:
    """What the token says; raises when it is not usable."""
    try:
        payload = signing.loads(token, salt=SALT, max_age=settings.FEEDBACK_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise FeedbackTokenExpired() from None
    except (signing.BadSignature, ValueError, UnicodeDecodeError):
        raise FeedbackTokenInvalid() from None
    if isinstance(payload, str):
        return FeedbackTokenClaims(session_id=payload, session_pk=None)
    match payload:
        case [str(session_id), int(session_pk)] if not isinstance(session_pk, bool):
            return FeedbackTokenClaims(session_id=session_id, session_pk=session_pk)
    raise FeedbackTokenInvalid()


def feedback_token_fits_session(*, claims: FeedbackTokenClaims) -> bool:
    """Whether the session now under the token's sessionId is the one it was made for.
    True when there is none (the feedback answers that: 404), and for a token that names
    no row."""
    if claims.session_pk is None:
        return True
    session_pk = (
        DiagnosisSession.objects.filter(session_id=claims.session_id)
        .values_list("pk", flat=True)
        .first()
    )
    return session_pk is None or session_pk == claims.session_pk
