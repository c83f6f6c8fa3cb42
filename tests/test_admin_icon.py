"""Every console page names its icon, so that browsers do not ask for /favicon.ico (a
404 in the console of every page) and the tab is told apart from others."""

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/admin/login/", "/admin/", "/admin/feedback/badcase/"])
def test_a_console_page_links_the_consoles_icon(admin_client, path) -> None:
    client = Client() if path == "/admin/login/" else admin_client

    page = client.get(path).content.decode()

    icon = static("diagnosis/favicon.svg")
    assert f'<link rel="icon" type="image/svg+xml" href="{icon}">' in page
    assert finders.find("diagnosis/favicon.svg")
