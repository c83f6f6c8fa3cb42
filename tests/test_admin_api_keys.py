"""The API keys' admin page, as an operator reads it in Chinese."""

import re

import pytest

pytestmark = pytest.mark.django_db

LIST = "/admin/diagnosis/apikey/"


def filter_choices(page: str, title: str) -> list[str]:
    section = re.search(
        rf'<details data-filter-title="{title}".*?</details>', page, re.DOTALL
    ).group()
    return [" ".join(c.split()) for c in re.findall(r"<a[^>]*>([^<]*)</a>", section)]


def test_the_scope_filter_offers_all_once_then_each_scope(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"

    page = admin_client.get(LIST).content.decode()

    choices = filter_choices(page, "权限范围")
    assert choices.count("全部") == 1
    assert choices[0] == "全部" and len(choices) == 5


def test_the_scope_filter_reads_the_same_in_english(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "en"

    page = admin_client.get(LIST).content.decode()

    assert filter_choices(page, "scope") == [
        "All",
        "Everything",
        "Agent: report sessions and read them back",
        "Front end: submit feedback only",
        "Curator: add cases to the library",
    ]


@pytest.mark.parametrize(("language", "yes", "no"), [("zh-hans", "是", "否"), ("en", "Yes", "No")])
def test_the_expired_and_revoked_icons_are_named_in_the_consoles_language(
    admin_client, settings, language, yes, no
) -> None:
    from diagnosis.models import ApiKey

    settings.LANGUAGE_CODE = language
    key, _ = ApiKey.objects.create_key(name="old-agent", scope="agent")
    key.revoked = True
    key.save()

    page = admin_client.get(LIST).content.decode()

    # A screen reader reads the icon's name: revoked yes, expired no.
    assert re.search(
        rf'<td class="field-key_revoked"><img src="[^"]+/icon-yes\.svg" alt="{yes}">', page
    )
    assert re.search(
        rf'<td class="field-key_has_expired"><img src="[^"]+/icon-no\.svg" alt="{no}">', page
    )
    assert 'alt="True"' not in page and 'alt="False"' not in page
