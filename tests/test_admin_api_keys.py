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


def test_a_keys_expiry_is_written_as_every_list_writes_a_time(admin_client, settings) -> None:
    from datetime import UTC, datetime

    from diagnosis.models import ApiKey

    settings.LANGUAGE_CODE = "zh-hans"
    settings.TIME_ZONE = "Asia/Shanghai"
    ApiKey.objects.create_key(
        name="short-lived", scope="agent", expiry_date=datetime(2026, 9, 30, 14, 59, tzinfo=UTC)
    )

    page = admin_client.get(LIST).content.decode()

    # The day above the time, in TIME_ZONE; the long form in its tooltip.
    assert re.search(
        r'<td class="field-key_expiry"><time class="list-time" [^>]*title="2026年9月30日 22:59">'
        r"<span>2026-09-30</span> <span>22:59</span></time>",
        page,
    )
    assert re.search(r'<th scope="col" class="sortable column-key_expiry', page)
