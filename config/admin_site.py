"""The console's admin site: Django's, with a login that locks after too many failures
(config/login_guard.py). Every failed login is logged; a locked one is answered 429 on
the login page itself, without a look at the password; a login leaves the browser the
cookie that spares it the locks others' failures put on its account or its address.

Its pages link to one another only where the link opens (ModelPages): staff given
single permissions by hand see no link that answers them 403."""

import math
from typing import Any

from django.contrib import admin
from django.contrib.admin import AdminSite
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html
from django.utils.safestring import SafeString
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


# --- Links that open ---------------------------------------------------------------------


class ModelPages:
    """Which models' admin pages (the list, an object's page) open to one request's
    user: those whose model admin lets them view or change, the admin's own check, as
    the pages themselves ask it; any other answers 403. Asked once a model a request."""

    def __init__(self, request: HttpRequest | None) -> None:
        self._request = request
        self._answers: dict[type[Model], bool] = {}

    def open(self, model: type[Model]) -> bool:
        if self._request is None:
            return False
        if model not in self._answers:
            site = admin.site
            self._answers[model] = site.is_registered(model) and site.get_model_admin(
                model
            ).has_view_or_change_permission(self._request)
        return self._answers[model]

    def link(self, model: type[Model], url: str, text: Any) -> SafeString:
        """`text` linked to `url`, a page of `model`, when it opens; else the text alone."""
        if self.open(model):
            return format_html('<a href="{}">{}</a>', url, text)
        return format_html("{}", text)


def model_pages(request: HttpRequest) -> ModelPages:
    return ModelPages(request)


# Where a model admin leaves what opens to its user on the objects it shows.
_PINNED = "_model_pages"
_NONE_OPEN = ModelPages(None)


def model_pages_of(obj: Any) -> ModelPages:
    """What opens to the user an object is shown to, pinned by ModelPagesMixin; nothing
    opens when nothing was pinned (no link rather than one that may answer 403)."""
    return getattr(obj, _PINNED, _NONE_OPEN)


class ModelPagesMixin:
    """For a ModelAdmin whose list columns or page fields link to other models' pages.
    Display methods are given the object alone: this pins what opens to the request's
    user on the object of its page and on each row of its list, and the methods ask
    model_pages_of(obj) before they link."""

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is not None:
            setattr(obj, _PINNED, model_pages(request))
        return obj

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        response = super().changelist_view(request, extra_context)  # type: ignore[misc]
        changelist = (getattr(response, "context_data", None) or {}).get("cl")
        if changelist is not None:
            # The rows the page renders (read here rather than when it renders: the same
            # one statement).
            pages = model_pages(request)
            for row in changelist.result_list:
                setattr(row, _PINNED, pages)
        return response
