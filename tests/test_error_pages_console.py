"""A request Django refuses (400) and a page that failed (500) are answered by a page of the
console, in its language, as a 403 and a 404 are: Django's own are a bare English "Bad
Request (400)" and "Server Error (500)". The API answers its JSON all the same."""

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path

from config import urls as service_urls

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


def failing(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a page that fails")


# The service's routes and error handlers, with a page and an endpoint that fail.
urlpatterns = [
    path("admin/failing/", failing),
    path("api/failing", failing),
    *service_urls.urlpatterns,
]
handler400 = service_urls.handler400
handler404 = service_urls.handler404
handler500 = service_urls.handler500

BAD_HOST = "evil.example"
CONSOLE = ['id="site-name"', 'href="/admin/"', "diagnosis/admin.css"]


@pytest.fixture(autouse=True)
def debug_off(settings):  # type: ignore[no-untyped-def]
    settings.DEBUG = False


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("zh-hans", ["服务器错误", "控制台显示这个页面时出错了"]),
        ("en", ["Server error", "could not show"]),
    ],
)
def test_a_page_that_failed_says_so_in_the_consoles_language(settings, language, words) -> None:
    settings.LANGUAGE_CODE = language

    response = Client(raise_request_exception=False).get("/admin/failing/")

    assert response.status_code == 500
    page = response.content.decode()
    assert all(word in page for word in words + CONSOLE)
    assert "Server Error (500)" not in page


@pytest.mark.parametrize(
    ("language", "words"),
    [("zh-hans", ["请求无效", "控制台不接受这个请求"]), ("en", ["Bad request", "does not accept"])],
)
def test_a_request_django_refuses_says_so_in_the_consoles_language(
    settings, language, words
) -> None:
    settings.LANGUAGE_CODE = language

    response = Client().get("/admin/", HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    page = response.content.decode()
    assert all(word in page for word in words + CONSOLE)
    assert "Bad Request (400)" not in page


def test_an_api_endpoint_that_failed_still_answers_json() -> None:
    response = Client(raise_request_exception=False).get("/api/failing")

    assert response.status_code == 500
    assert response.json()["code"] == "server_error"


def test_an_api_request_django_refuses_still_answers_json() -> None:
    response = Client().get("/api/cases", HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    assert response.json()["code"] == "disallowed_host"
