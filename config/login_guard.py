"""Failed admin logins: each one logged, and too many lock the login for a while.

Failures are counted three ways, those django-axes names with AXES_LOCKOUT_PARAMETERS =
[["username", "ip_address"], "ip_address", "username"], each with a limit of its own:

- an account at one client address (ADMIN_LOGIN_MAX_FAILURES, 10): the lock a guesser
  meets. It holds the account at that address only, so a stranger who knows the name
  `admin` cannot lock its operator out at the operator's own address;
- an address across accounts (ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS, 50): one address
  spraying passwords over many accounts, each below the pair's limit;
- an account across addresses (ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME, 100): guessing
  spread over many addresses, which no pair's limit sees. Each address stops at the
  pair's limit, so reaching this one takes ten addresses or more; it then locks the
  account for every browser but those that have signed in as it before.

A login gives the browser a signed cookie naming the account (OWASP's "device cookie",
the standard answer to lockouts an attacker can cause). Such a browser, signing in as an
account its cookie names, is spared the two wider locks, never the pair's, which keeps
even it to the pair's ten guesses a window at the account from its address. A botnet so
gets at most 100 guesses a window at one account and still cannot keep the operator out
of the operator's own browser; a sprayer (or a script gone wrong) sharing an office's
NAT locks the address, but not for the operators who sign in there every day. Spraying
is trying many accounts, and the cookie names only the few the browser has signed in as:
its attempts at any other account are held by the address lock as anyone's. Its failures
count towards all three limits as anyone's do, so a sprayer behind the same address is
locked all the same. The cookie names the last five accounts that signed in from the
browser; a browser new to the account (or one whose cookie is 90 days old, or forged)
waits such a lock out like anyone else.

The two wider limits default to multiples of the pair's (config/security_settings.py
says why these).

An account is every spelling of a username that logs in as it (same_account); the
address is the one the API's rate limits see (config.client_address: behind
TRUSTED_PROXY_COUNT proxies, the forwarded one when it is an IP address). Each count is
one integer per window in Django's cache, as those limits keep theirs
(config/throttling.py), shared by every process when REDIS_URL is set. A window opens at
a failure and lasts ADMIN_LOGIN_LOCKOUT_SECONDS; a count at its limit locks until its
window closes. A refused attempt is not counted (it does not keep a window open). A
login forgets its own pair's failures only: not the address's (a sprayer who owns one
account would sign in to start over) nor the account's (the operator's login would give
a botnet a fresh hundred).
"""

import hashlib
import logging
import math
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from config.client_address import client_address
from config.middleware import is_cache_outage
from config.throttling import WindowCountThrottle

logger = logging.getLogger(__name__)

# Django's usernames are at most 150 characters: what a form may hold beyond is not one.
USERNAME_LOGGED_CHARS = 150

# The limits as the log lines name them (`limit`), each with the setting it is read from.
PAIR, ADDRESS, USERNAME = "username_address", "address", "username"
MAX_FAILURES = {
    PAIR: "ADMIN_LOGIN_MAX_FAILURES",
    ADDRESS: "ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS",
    USERNAME: "ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME",
}

# The cookie a login leaves in the browser: the accounts that signed in from it (the
# latest TRUSTED_ACCOUNTS), signed with SECRET_KEY, sent to the login page only. It stays
# good this long after the last login that set it.
TRUSTED_COOKIE = "admin_login_trusted"
TRUSTED_SALT = "config.login_guard.trusted"
TRUSTED_MAX_AGE = 90 * 24 * 3600
TRUSTED_ACCOUNTS = 5
# The locks a browser the cookie trusts for the account is spared: the two that failures
# at other accounts or from other addresses reach. Never the pair's, which keeps even that
# browser to ADMIN_LOGIN_MAX_FAILURES guesses a window at the account from its address.
SPARED_WHEN_TRUSTED = (ADDRESS, USERNAME)


class LoginFailureCount(WindowCountThrottle):
    """The failed logins of one limit's subject (a pair, an address, an account) in the
    current window."""

    def __init__(self, limit: str, ident: str) -> None:
        self.limit = limit
        self.scope = f"admin-login-{limit}"
        super().__init__()
        self.key = self.cache_format % {"scope": self.scope, "ident": ident}
        self.now = self.timer()

    def get_rate(self) -> str:
        failures, seconds = self.parse_rate(None)
        return f"{failures}/{seconds}s"

    def parse_rate(self, rate: str | None) -> tuple[int, int]:
        # The window is any number of seconds, not one of DRF's periods.
        return getattr(settings, MAX_FAILURES[self.limit]), settings.ADMIN_LOGIN_LOCKOUT_SECONDS

    def locked_for(self) -> int:
        """Seconds until the window closes when it holds enough failures to lock; else 0."""
        if (self.cache.get(self.key) or 0) < self.num_requests:
            return 0
        return math.ceil(self.wait())

    def add(self) -> bool:
        """Count a failure; whether it is the one that reaches the limit."""
        return self._count() == self.num_requests

    def forget(self) -> None:
        self.cache.delete_many([self.key, f"{self.key}:since"])


@dataclass(frozen=True)
class LoginAttempt:
    """A POST to the admin's login: who it claims to be, from where, and whether the
    browser has signed in as that account before."""

    username: str
    client_address: str
    # The accounts that signed in from this browser, latest first (the signed cookie's).
    trusted_accounts: tuple[str, ...] = ()

    @classmethod
    def of(cls, request: HttpRequest) -> "LoginAttempt":
        username = str(request.POST.get("username", ""))[:USERNAME_LOGGED_CHARS]
        # The address as the API's rate limits find it (TRUSTED_PROXY_COUNT).
        address = client_address(request)
        # A missing, forged or expired cookie is "" (get_signed_cookie's default).
        trusted_as = request.get_signed_cookie(
            TRUSTED_COOKIE, default="", salt=TRUSTED_SALT, max_age=TRUSTED_MAX_AGE
        )
        trusted_accounts = tuple(account for account in trusted_as.split(",") if account)
        return cls(username=username, client_address=address, trusted_accounts=trusted_accounts)

    @property
    def account(self) -> str:
        return account_key(self.username)

    @property
    def trusted(self) -> bool:
        """Whether this browser has signed in as the account before."""
        return self.account in self.trusted_accounts

    def _counts(self) -> list[LoginFailureCount]:
        return [
            LoginFailureCount(PAIR, f"{self.account}_{self.client_address}"),
            LoginFailureCount(ADDRESS, self.client_address),
            LoginFailureCount(USERNAME, self.account),
        ]

    def _log_fields(self) -> dict[str, str]:
        return {"username": self.username, "client_address": self.client_address}


@dataclass(frozen=True)
class LoginLock:
    """Why an attempt is refused: the limits that hold it (comma-separated, as logged)
    and the seconds until the last of their windows closes."""

    limit: str
    seconds: int


def same_account(username: str) -> str:
    """One form of every spelling of a username that logs in as the same account: the
    login form trims it and NFKC-normalises it (full-width ｒｏｏｔ is root), and MySQL's
    and MariaDB's default collations match it in any letter case and without accents
    (röot is root). Counted under one name, each spelling shares the lock."""
    name = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", username.strip()))
    return "".join(c for c in name if not unicodedata.combining(c)).casefold()


def account_key(username: str) -> str:
    """The account a username logs in as, as the counts and the cookie name it: a digest,
    for a username as typed may hold anything, of any length, and they should not."""
    return hashlib.sha256(same_account(username).encode()).hexdigest()


def admin_login_lock(*, attempt: LoginAttempt) -> LoginLock | None:
    """What refuses the attempt unchecked; None when it may try (also while the cache
    cannot be reached: the console is needed most during an outage)."""
    try:
        held = {
            count.limit: seconds
            for count in attempt._counts()
            if not (attempt.trusted and count.limit in SPARED_WHEN_TRUSTED)
            if (seconds := count.locked_for())
        }
    except Exception as exc:
        if not is_cache_outage(exc):
            raise
        _not_counted(attempt, exc)
        return None
    if not held:
        return None
    return LoginLock(limit=",".join(held), seconds=max(held.values()))


def admin_login_failed(*, attempt: LoginAttempt) -> None:
    try:
        reached = [count.limit for count in attempt._counts() if count.add()]
    except Exception as exc:
        if not is_cache_outage(exc):
            raise
        reached = []
    # `limit` names the limits this failure reached, if any (None is left out of the line).
    extra = {**attempt._log_fields(), "limit": ",".join(reached) or None}
    logger.warning("admin login failed", extra=extra)


def _not_counted(attempt: LoginAttempt, exc: Exception) -> None:
    logger.warning(
        "admin login: the cache cannot be reached, failed logins are not counted (%s)",
        exc.__class__.__name__,
        extra=attempt._log_fields(),
    )


def admin_login_refused(*, attempt: LoginAttempt, lock: LoginLock) -> None:
    logger.warning(
        "admin login refused: too many failed logins",
        extra={**attempt._log_fields(), "limit": lock.limit, "retry_after": lock.seconds},
    )


def admin_login_succeeded(*, attempt: LoginAttempt, response: HttpResponse, path: str) -> None:
    """Forget the pair's failures, and trust the browser for this account from now on
    (`response` sets the cookie for the login page at `path`)."""
    try:
        attempt._counts()[0].forget()
    except Exception as exc:
        if not is_cache_outage(exc):
            raise
    others = [account for account in attempt.trusted_accounts if account != attempt.account]
    response.set_signed_cookie(
        TRUSTED_COOKIE,
        ",".join([attempt.account, *others][:TRUSTED_ACCOUNTS]),
        salt=TRUSTED_SALT,
        max_age=TRUSTED_MAX_AGE,
        path=path,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Strict",
    )
