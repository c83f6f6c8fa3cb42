"""Every admin list showing the same sessions writes its times in one form: the day above
the time ("2026-09-30" over "22:59"), the same in English and in Chinese, Django's long
form in its tooltip, and sorting by the column still orders the rows. A bad case, its
session and its call read the same time on each list."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from diagnosis.models import ApiKey, DiagnosisSession, ToolCatalogEntry, ToolInvocation
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

AT = datetime(2026, 9, 30, 14, 59, tzinfo=UTC)  # 22:59 in Shanghai
LONG_FORMS = {"en": "Sept. 30, 2026, 10:59 p.m.", "zh-hans": "2026年9月30日 22:59"}
SHORT_FORM = "<span>2026-09-30</span> <span>22:59</span>"

# Each list: its address and its time columns.
LISTS = {
    "sessions": ("/admin/diagnosis/diagnosissession/", ["created_at_column"]),
    "bad_cases": ("/admin/feedback/badcase/", ["feedback_at_column", "created_at_column"]),
    "unbacked": (
        "/admin/feedback/usefulwithoutevidence/",
        ["feedback_at_column", "created_at_column"],
    ),
    "invocations": ("/admin/diagnosis/toolinvocation/", ["created_at_column"]),
    "api_keys": ("/admin/diagnosis/apikey/", ["key_created"]),
    "tool_catalog": ("/admin/diagnosis/toolcatalogentry/", ["first_seen_column"]),
}


def cells(page: str, field: str) -> list[str]:
    return re.findall(rf'<td class="field-{field}[^"]*">(.*?)</td>', page, re.S)


def the_same_times() -> None:
    """A useful session barely backed, a bad case and a call, a key and a tool, all at AT."""
    useful = DiagnosisSessionFactory(useful=True, evidence_score=20)
    review = BadCaseReviewFactory()
    ToolInvocationFactory(session=useful)
    DiagnosisSession.objects.update(created_at=AT, feedback_at=AT)
    ToolInvocation.objects.update(created_at=AT)
    key, _ = ApiKey.objects.create_key(name="agent", scope="agent")
    ApiKey.objects.filter(pk=key.pk).update(created=AT)
    ToolCatalogEntry.objects.create(tool_name="search_docs")
    ToolCatalogEntry.objects.update(first_seen=AT)
    assert review.session.feedback == "not_useful"


@pytest.mark.parametrize("language", list(LONG_FORMS))
@pytest.mark.parametrize("name", list(LISTS))
def test_each_list_writes_its_times_as_day_and_time_with_the_long_form_in_the_tooltip(
    admin_client, settings, name, language
) -> None:
    settings.LANGUAGE_CODE = language
    settings.TIME_ZONE = "Asia/Shanghai"
    the_same_times()
    url, fields = LISTS[name]

    page = admin_client.get(url).content.decode()

    for field in fields:
        found = cells(page, field)
        assert found, (field, page.count("<td"))
        for cell in found:
            assert SHORT_FORM in cell, cell
            assert f'title="{LONG_FORMS[language]}"' in cell, cell


# The lists that sort by a time column, with the rows to make and how a row is named.
SORTED = {
    "sessions": ("/admin/diagnosis/diagnosissession/", "created_at_column"),
    "bad_cases": ("/admin/feedback/badcase/", "created_at_column"),
    "unbacked": ("/admin/feedback/usefulwithoutevidence/", "feedback_at_column"),
    "unbacked_created": ("/admin/feedback/usefulwithoutevidence/", "created_at_column"),
    "api_keys": ("/admin/diagnosis/apikey/", "key_created"),
}


def sort_link(page: str, field: str) -> str:
    """The link of the column's name, which sorts the rows by it the other way round (the
    earliest first when unsorted, as when sorted the latest first)."""
    header = (
        rf'<th scope="col" class="sortable column-{field}[^"]*">'
        r'.*?<div class="text"><a href="([^"]+)"'
    )
    found = re.search(header, page, re.S)
    assert found, field
    return found[1].replace("&amp;", "&")


@pytest.mark.parametrize("name", list(SORTED))
def test_sorting_by_a_time_column_orders_the_rows_by_that_time(
    admin_client, settings, name
) -> None:
    settings.LANGUAGE_CODE = "en"
    url, field = SORTED[name]
    names = ["row-a", "row-b", "row-c"]
    # Made in an order neither ascending nor descending by their times.
    for n, hours in zip(names, (2, 0, 1), strict=True):
        when = AT + timedelta(hours=hours)
        if name == "api_keys":
            key, _ = ApiKey.objects.create_key(name=n, scope="agent")
            ApiKey.objects.filter(pk=key.pk).update(created=when)
            continue
        kinds = {"bad_cases": {"not_useful": True}}
        session = DiagnosisSessionFactory(
            session_id=n, **kinds.get(name, {"useful": True, "evidence_score": 20})
        )
        DiagnosisSession.objects.filter(pk=session.pk).update(created_at=when, feedback_at=when)

    page = admin_client.get(url).content.decode()
    link = sort_link(page, field)
    earliest_first = admin_client.get(url + link).content.decode()
    latest_first = admin_client.get(url + sort_link(earliest_first, field)).content.decode()

    def order(html: str) -> list[str]:
        return sorted(names, key=lambda n: html.index(f">{n}<"))

    assert order(earliest_first) == ["row-b", "row-c", "row-a"]
    assert order(latest_first) == ["row-a", "row-c", "row-b"]
