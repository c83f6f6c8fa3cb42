"""The service's HTML pages carry a Content-Security-Policy that runs only the service's
own script files: the admin console, its login, its error pages. The JSON API needs none.
The console's cookies: the language cookie goes only with same-site requests, and no
script may read the CSRF token's cookie (none of ours reads it)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SESSIONS = "/admin/diagnosis/diagnosissession/"
# What the policy says, directive by directive; each page is held to all of it.
REQUIRED = {
    "default-src": "'self'",
    "script-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
    "img-src": "'self' data:",
    "style-src": "'self'",
}
# A script the page holds itself, or an event handler in an attribute (onclick=...).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=", re.IGNORECASE)


def policy(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    header = response.headers["Content-Security-Policy"]
    directives = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {name: value for name, value in directives}


@pytest.mark.parametrize(
    "path",
    [
        "/admin/",
        SESSIONS,
        "/admin/feedback/badcase/",
        "/admin/caselibrary/caselibrary/",
        "/admin/overview/",
    ],
)
def test_every_admin_page_carries_the_policy(admin_client, path) -> None:  # type: ignore[no-untyped-def]
    response = admin_client.get(path)

    assert response.status_code == 200
    assert policy(response) == REQUIRED


def test_a_session_s_page_with_its_timeline_carries_the_policy(admin_client) -> None:  # type: ignore[no-untyped-def]
    session = DiagnosisSessionFactory(session_id="csp-timeline", succeeded=True)

    response = admin_client.get(f"{SESSIONS}{session.pk}/change/")

    assert 'id="session-timeline"' in response.content.decode()
    assert policy(response) == REQUIRED


def test_the_login_page_carries_the_policy() -> None:
    response = Client().get("/admin/login/")

    assert response.status_code == 200
    assert policy(response) == REQUIRED


def test_the_permission_denied_page_carries_the_policy(staff_client) -> None:  # type: ignore[no-untyped-def]
    response = staff_client.get("/admin/caselibrary/caselibrary/")

    assert response.status_code == 403
    assert policy(response) == REQUIRED


def test_the_not_found_page_carries_the_policy(admin_client) -> None:  # type: ignore[no-untyped-def]
    response = admin_client.get("/admin/no-such-page/nowhere/")

    assert response.status_code == 404
    assert policy(response) == REQUIRED


def test_the_policy_agrees_with_x_frame_options() -> None:
    response = Client().get("/admin/login/")

    assert response.headers["X-Frame-Options"] == "DENY"
    assert policy(response)["frame-ancestors"] == "'none'"


def test_the_json_api_answers_as_before(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/api/sessions/nobody")

    assert response.status_code == 401
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["success"] is False


@pytest.mark.parametrize(
    "template",
    sorted(TEMPLATES.rglob("*.html")),
    ids=lambda path: str(path.relative_to(TEMPLATES)),
)
def test_no_template_of_the_project_holds_an_inline_script(template: Path) -> None:
    assert not INLINE_SCRIPT.findall(template.read_text())


def test_the_case_list_holds_no_inline_script(admin_client) -> None:  # type: ignore[no-untyped-def]
    CaseLibraryFactory(title="Redis 内存告警")

    page = admin_client.get("/admin/caselibrary/caselibrary/").content.decode()

    assert not INLINE_SCRIPT.findall(page)


def test_the_language_cookie_goes_with_same_site_requests_only(admin_client) -> None:  # type: ignore[no-untyped-def]
    response = admin_client.post("/i18n/setlang/", {"language": "en", "next": SESSIONS})

    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie["samesite"] == "Lax"


def test_the_language_cookie_is_as_secure_as_the_session_cookie() -> None:
    assert settings.LANGUAGE_COOKIE_SECURE == settings.SESSION_COOKIE_SECURE


def test_no_script_reads_the_csrf_cookie() -> None:
    response = Client().get("/admin/login/")

    assert response.cookies[settings.CSRF_COOKIE_NAME]["httponly"] is True
