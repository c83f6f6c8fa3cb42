"""A form refused for its CSRF token: in the console's look and the operator's language,
saying what to do, under the service's Content-Security-Policy; a JSON 403 for a program."""

import json
import re

import pytest
from django.conf import settings as settings_module
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.test import Client, RequestFactory
from playwright.sync_api import Browser, expect

from tests.page_text import text
from tests.test_admin_browser import PASSWORD, browser, finish  # noqa: F401
from tests.test_content_security_policy_browser import refusals, watched

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
CREDENTIALS = {"username": "ops.admin", "password": "whatever"}


def post_without_token(path: str = LOGIN, **headers: str):  # type: ignore[no-untyped-def]
    return Client(enforce_csrf_checks=True).post(path, CREDENTIALS, **headers)


def test_a_login_sent_without_a_token_gets_a_403_page_in_the_console_s_look(settings) -> None:
    settings.LANGUAGE_CODE = "en"

    response = post_without_token()

    assert response.status_code == 403
    page = text(response)
    assert '<html lang="en"' in page
    assert "Diagnosis console" in page
    assert "/static/admin/css/base.css" in page and "/static/diagnosis/admin.css" in page
    assert 'id="language-switcher"' in page
    assert 'id="nav-sidebar"' not in page  # as on the login page
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_page_carries_no_inline_style_for_the_policy_to_refuse(settings) -> None:
    settings.LANGUAGE_CODE = "en"

    page = post_without_token().content.decode()

    assert not re.search(r"<style[\s>]", page, re.IGNORECASE)
    assert not re.search(r"\sstyle\s*=", page, re.IGNORECASE)
    # Each script the page has is a file of the service's, none written into it.
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))


def test_the_page_says_the_form_expired_or_cookies_are_blocked_and_what_to_do(
    settings,
) -> None:
    settings.LANGUAGE_CODE = "en"

    page = text(post_without_token())

    assert "<h1>Your form could not be sent</h1>" in page
    assert "This form has expired, or your browser is blocking this site's cookies." in page
    assert "reload the page and submit the form again" in page
    assert '<a href="/admin/">Back to the console</a>' in page


def test_the_page_is_in_chinese_in_the_chinese_console(settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"

    response = post_without_token()

    assert response.status_code == 403
    page = text(response)
    assert '<html lang="zh-hans"' in page
    assert "诊断控制台" in page
    assert "<h1>表单未能提交</h1>" in page
    assert "表单已过期，或浏览器阻止了本站的 Cookie。" in page
    assert '<a href="/admin/">返回控制台</a>' in page
    assert "expired" not in page


def test_the_page_follows_the_language_the_operator_chose(settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    client = Client(enforce_csrf_checks=True)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"

    page = text(client.post(LOGIN, CREDENTIALS))

    assert '<html lang="en"' in page and "Your form could not be sent" in page


def test_the_link_leads_back_to_the_page_the_form_came_from(settings) -> None:
    settings.LANGUAGE_CODE = "en"
    came_from = "http://testserver/admin/login/?next=/admin/feedback/badcase/"

    page = post_without_token(HTTP_REFERER=came_from).content.decode()

    assert f'<a href="{came_from}">Back to the page you came from</a>' in page


@pytest.mark.parametrize(
    "referer",
    ["https://evil.example/admin/", "javascript:alert(1)", "//evil.example/", "not a url"],
)
def test_a_referer_of_another_site_leads_back_to_the_console_instead(settings, referer) -> None:
    settings.LANGUAGE_CODE = "en"

    page = post_without_token(HTTP_REFERER=referer).content.decode()

    assert '<a href="/admin/">Back to the console</a>' in page
    assert "evil.example" not in page and "javascript:" not in page


def test_a_signed_in_operator_keeps_the_console_s_header_and_a_fresh_token(settings) -> None:
    settings.LANGUAGE_CODE = "en"
    user = get_user_model().objects.create_superuser("ops.admin", password=PASSWORD)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    response = client.post("/admin/feedback/badcase/", {"action": "mark_triaged"})

    assert response.status_code == 403
    page = text(response)
    assert 'id="user-tools"' in page and "ops.admin" in page
    assert 'id="nav-sidebar"' in page
    # Reloading the form now gives it a token the next post is accepted with.
    assert response.cookies[settings.CSRF_COOKIE_NAME].value


def test_django_s_reason_is_shown_only_when_debug_is_on(settings) -> None:
    settings.LANGUAGE_CODE = "en"

    assert "CSRF cookie not set." not in text(post_without_token())

    settings.DEBUG = True
    assert "CSRF cookie not set." in text(post_without_token())


def test_a_browser_that_sent_no_referer_over_https_is_told_so(settings) -> None:
    settings.LANGUAGE_CODE = "en"
    client = Client(enforce_csrf_checks=True)
    client.get(LOGIN, secure=True)  # the cookie, so that the Referer is what fails

    token = client.cookies[settings.CSRF_COOKIE_NAME].value

    page = text(client.post(LOGIN, {**CREDENTIALS, "csrfmiddlewaretoken": token}, secure=True))

    assert "Your browser did not send the Referer header" in page
    # Its cookie and token were good: no word of expired forms or blocked cookies.
    assert "This form has expired" not in page and "allow cookies" not in page


def test_a_form_refused_for_its_origin_tells_who_can_mend_it_without_naming_origins(
    settings,
) -> None:
    settings.LANGUAGE_CODE = "en"
    client = Client(enforce_csrf_checks=True)
    client.get(LOGIN)
    token = client.cookies[settings.CSRF_COOKIE_NAME].value

    # The console's own address over HTTPS, which a proxy ends: Django sees plain HTTP.
    page = text(
        client.post(
            LOGIN,
            {**CREDENTIALS, "csrfmiddlewaretoken": token},
            headers={"origin": "https://testserver"},
        )
    )

    assert "add the address it is reached at to CSRF_TRUSTED_ORIGINS" in page
    assert "Reloading will not help" in page
    assert "allow cookies" not in page  # the advice for an expired form or blocked cookies
    assert "does not match any trusted origins" not in page  # Django's reason, DEBUG only


def test_a_form_from_another_site_is_told_apart_from_the_console_s_own_address(
    settings,
) -> None:
    settings.LANGUAGE_CODE = "en"
    client = Client(enforce_csrf_checks=True)
    client.get(LOGIN, secure=True)
    token = client.cookies[settings.CSRF_COOKIE_NAME].value

    page = text(
        client.post(
            LOGIN,
            {**CREDENTIALS, "csrfmiddlewaretoken": token},
            secure=True,
            headers={"origin": "https://forms.example.net"},
        )
    )

    # Named, and not only the advice to trust it, which would open the console to that site.
    assert "This form was sent from https://forms.example.net" in page
    assert "If you did not mean to send it, nothing was changed" in page
    assert "Reloading will not help" not in page


def test_a_json_client_refused_for_its_origin_is_told_so_not_to_send_a_token(settings) -> None:
    client = Client(enforce_csrf_checks=True)
    client.get(LOGIN, secure=True)
    token = client.cookies[settings.CSRF_COOKIE_NAME].value

    response = client.post(
        LOGIN,
        {**CREDENTIALS, "csrfmiddlewaretoken": token},
        secure=True,
        headers={"origin": "https://console.example.com", "accept": "application/json"},
    )

    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "csrf_failed"
    assert "CSRF_TRUSTED_ORIGINS" in body["message"] and "X-CSRFToken" not in body["message"]


def test_a_refusal_before_the_user_is_known_still_gets_the_page(settings) -> None:
    settings.LANGUAGE_CODE = "en"
    request = RequestFactory().post(LOGIN, CREDENTIALS)
    checked = CsrfViewMiddleware(lambda request: HttpResponse())

    response = checked.process_view(request, lambda request: HttpResponse(), (), {})

    assert response is not None and response.status_code == 403
    assert "Your form could not be sent" in text(response) and "Diagnosis console" in text(response)


def test_a_request_asking_for_json_gets_the_api_s_json_403(settings) -> None:
    response = post_without_token(HTTP_ACCEPT="application/json")

    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["success"] is False and body["code"] == "csrf_failed"
    assert "CSRF" in body["message"]


def test_a_json_body_without_an_accept_header_gets_json_too() -> None:
    response = Client(enforce_csrf_checks=True).post(
        LOGIN, "{}", content_type="application/json", HTTP_ACCEPT="*/*"
    )

    assert response.status_code == 403 and response.json()["code"] == "csrf_failed"


def test_a_browser_posting_json_that_asks_for_html_gets_the_page() -> None:
    response = Client(enforce_csrf_checks=True).post(
        LOGIN,
        "{}",
        content_type="application/json",
        HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8",
    )

    assert response.status_code == 403 and response["Content-Type"].startswith("text/html")


def test_an_api_path_refused_for_its_token_answers_in_the_api_s_error_shape() -> None:
    # Every /api/ endpoint is exempt today (they authenticate by header); an endpoint that
    # took the session's cookie would be checked, and refused like this.
    request = RequestFactory().post(
        "/api/sessions", "{}", content_type="application/json", HTTP_ACCEPT="text/html"
    )
    checked = CsrfViewMiddleware(lambda request: HttpResponse())

    response = checked.process_view(request, lambda request: HttpResponse(), (), {})

    assert response is not None and response.status_code == 403
    body = json.loads(response.content)
    assert set(body) == {"success", "message", "code"}
    assert body["success"] is False and body["code"] == "csrf_failed"


def test_the_json_403_names_django_s_reason_only_when_debug_is_on(settings) -> None:
    accept_json = {"HTTP_ACCEPT": "application/json"}
    assert "CSRF cookie not set." not in post_without_token(**accept_json).json()["message"]

    settings.DEBUG = True
    assert "CSRF cookie not set." in post_without_token(**accept_json).json()["message"]


@pytest.mark.browser
def test_the_page_runs_in_chromium_without_a_refusal_of_the_policy(
    browser: Browser,  # noqa: F811
    live_server,
    settings,
    transactional_db,
    request,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 1000})
    language = {"name": settings_module.LANGUAGE_COOKIE_NAME, "value": "en"}
    context.add_cookies([{**language, "url": live_server.url}])
    page = watched(context.new_page())
    page.goto(f"{live_server.url}{LOGIN}?next=/admin/")
    # The page stays open while its cookie goes (expired, cleared): the form is refused.
    context.clear_cookies()
    context.add_cookies([{**language, "url": live_server.url}])
    page.fill("#id_username", "ops.admin")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")

    expect(page.locator("h1")).to_have_text("Your form could not be sent")
    expect(page.locator("#language-switcher")).to_be_visible()
    header = page.locator("#header").evaluate("e => getComputedStyle(e).backgroundColor")
    violations = refusals(page)
    finish(page, request.node.name)
    assert header not in ("rgba(0, 0, 0, 0)", "transparent")  # the admin's stylesheet applies
    assert violations == []
