"""The console's admin site: Django's, with a login that locks after too many failures
(config/login_guard.py). Every failed login is logged; a locked one is answered 429 on
the login page itself, without a look at the password; a login leaves the browser the
cookie that spares it the locks others' failures put on its account or its address."""

import math
from typing import Any

from django.contrib.admin import AdminSite
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.utils.translation import ngettext

from config.login_guard import (
    LoginAttempt,
    admin_login_failed,
    admin_login_lock,
    admin_login_refused,
    admin_login_succeeded,
)

# Set on a request the login refuses unchecked: the seconds its lock has left.
LOCKED_FOR = "admin_login_locked_for"


def lockout_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many failed logins. Please try again in %(minutes)d minute.",
        "Too many failed logins. Please try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


class ConsoleAuthenticationForm(AdminAuthenticationForm):
    """The admin's login form; a locked attempt is refused before it is authenticated."""

    def clean(self) -> dict[str, Any]:
        seconds = getattr(self.request, LOCKED_FOR, 0)
        if seconds:
            raise ValidationError(lockout_message(seconds), code="locked_out")
        return super().clean()


class ConsoleAdminSite(AdminSite):
    login_form = ConsoleAuthenticationForm

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        if request.method != "POST":
            return super().login(request, extra_context)
        attempt = LoginAttempt.of(request)
        lock = admin_login_lock(attempt=attempt)
        if lock:
            setattr(request, LOCKED_FOR, lock.seconds)
            admin_login_refused(attempt=attempt, lock=lock)
            response = super().login(request, extra_context)
            response.status_code = 429
            response["Retry-After"] = str(lock.seconds)
            return response
        response = super().login(request, extra_context)
        # LoginView redirects after a login and shows the form again after any failure.
        if response.status_code == 302:
            admin_login_succeeded(attempt=attempt, response=response, path=request.path)
        else:
            admin_login_failed(attempt=attempt)
        return response
