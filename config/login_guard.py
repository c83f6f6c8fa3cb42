"""Failed admin logins: each one logged, and too many lock the login for a while.

Failures are counted per username (in any spelling that names the same account:
same_account) and per client address
(the one the API's rate limits see: TRUSTED_PROXY_COUNT), the way those limits count
(config/throttling.py): one integer per window in Django's cache, shared by every
process when REDIS_URL is set. A window opens at a failure and lasts
ADMIN_LOGIN_LOCKOUT_SECONDS; once ADMIN_LOGIN_MAX_FAILURES failures are in it, the login
is refused for that username, or from that address, until it closes. A refused attempt
is not counted (it does not keep the window open), and a login forgets the username's
failures. Many failures for one username from many addresses lock that username: its
owner waits out the window like the rest.
"""

import hashlib
import logging
import math
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle

from config.throttling import WindowCountThrottle

logger = logging.getLogger(__name__)

# Django's usernames are at most 150 characters: what a form may hold beyond is not one.
USERNAME_LOGGED_CHARS = 150


class LoginFailureCount(WindowCountThrottle):
    """One username's or one address's failed logins in the current window."""

    def __init__(self, scope: str, ident: str) -> None:
        self.scope = scope
        self.ident = ident
        super().__init__()
        self.key = self.cache_format % {"scope": scope, "ident": ident}
        self.now = self.timer()

    def get_rate(self) -> str:
        return f"{settings.ADMIN_LOGIN_MAX_FAILURES}/{settings.ADMIN_LOGIN_LOCKOUT_SECONDS}s"

    def parse_rate(self, rate: str | None) -> tuple[int, int]:
        # The window is any number of seconds, not one of DRF's periods.
        return settings.ADMIN_LOGIN_MAX_FAILURES, settings.ADMIN_LOGIN_LOCKOUT_SECONDS

    def locked_for(self) -> int:
        """Seconds until the window closes when it holds enough failures to lock; else 0."""
        if (self.cache.get(self.key) or 0) < self.num_requests:
            return 0
        return math.ceil(self.wait())

    def add(self) -> None:
        self._count()

    def forget(self) -> None:
        self.cache.delete_many([self.key, f"{self.key}:since"])


@dataclass(frozen=True)
class LoginAttempt:
    """A POST to the admin's login: who it claims to be, and from where."""

    username: str
    client_address: str

    @classmethod
    def of(cls, request: HttpRequest) -> "LoginAttempt":
        username = str(request.POST.get("username", ""))[:USERNAME_LOGGED_CHARS]
        # The address as the API's rate limits find it (REST_FRAMEWORK's NUM_PROXIES).
        address = BaseThrottle().get_ident(request) or ""
        return cls(username=username, client_address=address)

    def _counts(self) -> tuple[LoginFailureCount, LoginFailureCount]:
        # A digest: a username as typed may hold anything, of any length, and the cache's
        # key should not.
        username = hashlib.sha256(same_account(self.username).encode()).hexdigest()
        return (
            LoginFailureCount("admin-login-user", username),
            LoginFailureCount("admin-login-address", self.client_address),
        )

    def _log_fields(self) -> dict[str, str]:
        return {"username": self.username, "client_address": self.client_address}


def same_account(username: str) -> str:
    """One form of every spelling of a username that logs in as the same account: the
    login form trims it and NFKC-normalises it (full-width ｒｏｏｔ is root), and MySQL's
    and MariaDB's default collations match it in any letter case and without accents
    (röot is root). Counted under one name, each spelling shares the lock."""
    name = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", username.strip()))
    return "".join(c for c in name if not unicodedata.combining(c)).casefold()


def admin_login_locked_for(*, attempt: LoginAttempt) -> int:
    """Seconds the attempt's username or address stays locked; 0 when it may try."""
    return max(count.locked_for() for count in attempt._counts())


def admin_login_failed(*, attempt: LoginAttempt) -> None:
    for count in attempt._counts():
        count.add()
    logger.warning("admin login failed", extra=attempt._log_fields())


def admin_login_refused(*, attempt: LoginAttempt, seconds: int) -> None:
    logger.warning(
        "admin login refused: too many failed logins",
        extra={**attempt._log_fields(), "retry_after": seconds},
    )


def admin_login_succeeded(*, attempt: LoginAttempt) -> None:
    attempt._counts()[0].forget()
