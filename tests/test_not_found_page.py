"""A page that does not exist is answered by a page of the console, in its language (Django's
own is a bare English "Not Found")."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "words"),
    [("zh-hans", ["页面没有找到", "这个地址没有页面"]), ("en", ["Page not found", "no page at"])],
)
def test_an_address_without_a_page_says_so_in_the_consoles_language(
    admin_client, settings, language, words
) -> None:
    settings.LANGUAGE_CODE = language

    response = admin_client.get("/admin/no-such-page/")

    assert response.status_code == 404
    page = response.content.decode()
    assert all(word in page for word in words)
    assert 'href="/admin/"' in page
    assert "The requested resource was not found on this server" not in page


def test_an_api_address_without_an_endpoint_is_still_json(admin_client) -> None:
    response = admin_client.get("/api/no-such-endpoint")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_a_visitor_not_signed_in_gets_the_same_page(client, settings) -> None:
    settings.LANGUAGE_CODE = "en"

    response = client.get("/no-such-page")

    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


def test_an_address_without_a_page_sets_no_csrf_cookie(client, settings) -> None:
    # A browser asks for /favicon.ico beside every page: a cookie set there would renew
    # the token under a form the console refused for its expired one.
    response = client.get("/favicon.ico")

    assert response.status_code == 404
    assert settings.CSRF_COOKIE_NAME not in response.cookies
