"""The overview and the attribution page in English: a count of one takes the singular
("1 of 1 finished session"), and dates are written as the lists write them, `2026-09-30` in
both languages, not in the US short form ("11/08/2026"). The attribution's factor table,
wider than a phone, scrolls sideways in its own box rather than the page."""

import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.utils import timezone

from caselibrary.selectors import case_index_state
from caselibrary.services.cases import case_update
from tests.factories import DiagnosisSessionFactory
from tests.page_text import visible_text
from tests.test_case_structuring import _auto_case as auto_case

pytestmark = pytest.mark.django_db

OVERVIEW = "/admin/overview/"
ATTRIBUTION = "/admin/overview/attribution/"
BUILT = datetime(2026, 11, 8, 9, 5, tzinfo=timezone.get_fixed_timezone(0))


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def one_of_each(db):  # type: ignore[no-untyped-def]
    """One finished session, rated useful; an index of one case, checked once."""
    DiagnosisSessionFactory(useful=True, evidence_score=65)
    state = case_index_state()
    state.version = "test-model"
    state.cases = 1
    state.built_at = BUILT
    state.findability = {
        "version": "test-model",
        "cases": 1,
        "degraded_by": "",
        "with_code": 1,
        "title_l0": 1.0,
        "title_top3": 1.0,
        "code_l0": 1.0,
        "code_top3": 1.0,
        "checked_at": BUILT.isoformat(),
    }
    state.save()


def iso_day(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d}"


@pytest.mark.usefixtures("admin_in_english")
def test_the_overview_writes_a_count_of_one_in_the_singular(admin_client, one_of_each) -> None:
    page = visible_text(admin_client.get(OVERVIEW))

    assert "1 of 1 finished session" in page
    assert "1 of 1 finished sessions" not in page
    assert "The search index holds 1 case (built" in page
    assert "(1 case checked," in page


@pytest.mark.usefixtures("admin_in_english")
def test_the_overview_writes_one_not_useful_session_and_one_reviewed_case_in_the_singular(
    admin_client,
) -> None:
    DiagnosisSessionFactory(not_useful=True, evidence_score=0)
    DiagnosisSessionFactory(useful=True, evidence_score=65)
    case = auto_case("s-1", "ORA-01555 慢查询")
    case_update(case=case, updated_by="ops.li", title="t")

    page = visible_text(admin_client.get(OVERVIEW))

    assert "1 of 2 with feedback was not useful" in page
    assert "1 of 1 reviewed automatic case " in page
    assert "of 1 reviewed automatic cases" not in page


@pytest.mark.usefixtures("admin_in_english")
def test_the_overview_still_writes_other_counts_in_the_plural(admin_client) -> None:
    DiagnosisSessionFactory.create_batch(2, useful=True, evidence_score=65)

    page = visible_text(admin_client.get(OVERVIEW))

    assert "2 of 2 finished sessions" in page


@pytest.mark.usefixtures("admin_in_english")
def test_the_attribution_writes_one_rated_session_in_the_singular(
    admin_client, one_of_each
) -> None:
    page = visible_text(admin_client.get(ATTRIBUTION))

    assert "From 1 rated session:" in page


@pytest.mark.parametrize(("language", "since"), [("en", "since {}:"), ("zh-hans", "{} 以来")])
def test_the_overview_writes_its_dates_as_the_lists_do(
    admin_client, one_of_each, settings, language, since
) -> None:
    settings.LANGUAGE_CODE = language

    response = admin_client.get(OVERVIEW)

    page = visible_text(response)
    assert since.format(iso_day(response.context["overview"].since)) in page
    built = timezone.localtime(BUILT)
    assert f"(built {built:%Y-%m-%d %H:%M})" in page or f"（构建于 {built:%Y-%m-%d %H:%M}）" in page


@pytest.mark.parametrize(("language", "since"), [("en", "since {}:"), ("zh-hans", "{} 以来")])
def test_the_attribution_writes_its_date_as_the_lists_do(
    admin_client, one_of_each, settings, language, since
) -> None:
    settings.LANGUAGE_CODE = language

    response = admin_client.get(ATTRIBUTION)

    assert since.format(iso_day(response.context["attribution"].since)) in visible_text(response)


@pytest.mark.parametrize("table", ["attribution", "calibration"])
def test_the_attribution_tables_scroll_sideways_in_a_box_of_their_own(
    admin_client, one_of_each, table
) -> None:
    page = admin_client.get(ATTRIBUTION).content.decode()

    # Django's change lists scroll their table sideways in `#changelist-form .results`
    # (changelists.css): at 390 px the page itself stays 390 px wide.
    assert "admin/css/changelists.css" in page
    box = page.index('<div id="changelist-form">')
    assert re.search(
        rf'<div class="results">\s*<table class="chart-data" id="{table}">', page[box:]
    )
    assert page.count('id="changelist-form"') == 1


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_day_charts_bars_name_their_day_as_the_lists_do(
    admin_client, one_of_each, settings, language
) -> None:
    settings.LANGUAGE_CODE = language

    page = admin_client.get(OVERVIEW).content.decode()

    today = timezone.localdate()
    assert f"<title>{today:%Y-%m-%d} · " in page


@pytest.mark.usefixtures("admin_in_english")
def test_the_findability_line_reads_as_the_command_prints_it_in_the_consoles_time(
    admin_client, one_of_each, settings
) -> None:
    settings.TIME_ZONE = "Asia/Shanghai"
    checked = datetime(2026, 12, 8, 0, 21, tzinfo=UTC)
    state = case_index_state()
    state.findability = {
        "cases": 272,
        "with_code": 30,
        "title_l0": 1.0,
        "title_top3": 1.0,
        "code_l0": 0.7333,
        "code_top3": 0.7333,
        "checked_at": checked.isoformat(),
        "degraded_by": "",
        "version": state.version,
    }
    state.save(update_fields=["findability"])

    line = visible_text(admin_client.get(OVERVIEW))

    assert "272 cases checked, 2026-12-08 08:21" in line
    assert "by title 100.0% L0 / 100.0% top 3" in line
    assert "by error code 73.3% L0 / 73.3% top 3" in line
