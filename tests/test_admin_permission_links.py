"""Staff given permissions by hand, outside the staff groups, are shown a link in the
admin only where it opens to them: every admin page such a user can reach is read, and
every address under /admin/ it links to answers them, never 403. An item still worth
showing (a session's id, a case's title) stays as plain text."""

import html
import itertools
import re
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from caselibrary.models import CaseReuse, CaseSearch, CaseSearchHit
from diagnosis.models import ToolInvocation
from feedback.models import BadCase
from tests.admin_pages import member_of
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
    FeedbackEntryFactory,
    ToolInvocationFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

_numbers = itertools.count()
_HREF = re.compile(r'href="([^"]*)"')
# Enough for every page of the console's few objects here; a crawl that needs more has
# found a loop of links.
MOST_REQUESTS = 600


def staff_with(*codenames: str) -> Client:
    """A staff user outside every group, with these model permissions alone."""
    user = get_user_model().objects.create_user(f"ops.hand{next(_numbers)}", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    assert user.user_permissions.count() == len(codenames), codenames
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def console() -> dict:
    """A console with something on every page: a useful session made a case, found by a
    search of its own and by another session's, a bad case with more tool calls than its
    page shows and a query too long for its cell, a reader's correction, and a category
    cases use."""
    FaultCategoryFactory(code="STORAGE", name="Storage")
    useful = DiagnosisSessionFactory(session_id="useful-1", useful=True, evidence_score=30)
    call = ToolInvocationFactory(session=useful, query="x" * 300)
    case = CaseLibraryFactory(diagnosis=useful, fault_category="STORAGE")
    search = CaseSearch.objects.create(
        session=useful,
        invocation_id=call.invocation_id,
        query="disk full",
        query_key="k1",
        match_level="L1",
        hit_count=1,
        case_ids=[str(case.pk)],
    )
    CaseSearchHit.objects.create(
        search=search,
        case_id=str(case.pk),
        session_id=useful.session_id,
        match_level="L1",
        rank=1,
    )
    CaseReuse.objects.create(case=case, l1_hits=1, sessions_useful=1)
    bad = DiagnosisSessionFactory(session_id="bad-1", not_useful=True, evidence_score=70)
    FeedbackEntryFactory(session=bad)
    ToolInvocation.objects.bulk_create(
        ToolInvocationFactory.build(session=bad, query="q" * (300 if n == 0 else 10))
        for n in range(501)
    )
    return {"useful": useful, "bad": BadCase.objects.get(pk=bad.pk), "case": case}


def _links(page_url: str, body: str) -> list[str]:
    found = []
    for raw in _HREF.findall(body):
        href = html.unescape(raw)
        if not href or href.startswith(("#", "javascript:")):
            continue
        url = urljoin(page_url, href)
        if urlsplit(url).path.startswith("/admin/"):
            found.append(url)
    return found


def _shape(url: str) -> tuple[str, frozenset[str]]:
    """A link's path and the names of its parameters: another value of the same filter
    asks the same permission."""
    parts = urlsplit(url)
    return parts.path, frozenset(name for name, _value in parse_qsl(parts.query))


def refused_links(client: Client) -> list[tuple[str, str]]:
    """(page, link) for every link under /admin/ that answers 403, on every page the user
    reaches from the index; each address is asked once whatever its parameters' values,
    and each page read once."""
    status: dict[tuple[str, frozenset[str]], int] = {}
    read: set[str] = set()
    seen: list[tuple[str, str]] = []
    to_read = [("", "/admin/")]
    while to_read:
        page, url = to_read.pop(0)
        seen.append((page, url))
        if _shape(url) in status:
            continue
        assert len(status) < MOST_REQUESTS, "the console's links never end"
        response = client.get(url, follow=True)
        status[_shape(url)] = response.status_code
        path = urlsplit(url).path
        if (
            response.status_code != 200
            or path in read
            or "html" not in response.get("Content-Type", "")
        ):
            continue
        read.add(path)
        final = response.redirect_chain[-1][0] if response.redirect_chain else url
        body = response.content.decode()
        to_read.extend((url, link) for link in _links(urljoin(url, final), body))
    return sorted({(page, url) for page, url in seen if status[_shape(url)] == 403})


HAND_PICKED = [
    ("view_diagnosissession",),
    ("change_diagnosissession",),
    ("view_badcase",),
    ("change_badcase",),
    ("view_badcase", "add_caselibrary"),
    ("view_usefulwithoutevidence",),
    ("view_toolinvocation",),
    ("view_caselibrary",),
    ("change_caselibrary",),
    ("add_caselibrary",),
    ("add_caselibrary", "change_caselibrary"),
    ("view_diagnosissession", "add_caselibrary"),
    ("view_faultcategory",),
    ("change_faultcategory",),
    ("delete_faultcategory", "view_faultcategory"),
    ("view_reviewtag",),
    ("view_toolcatalogentry",),
]


@pytest.mark.parametrize("codenames", HAND_PICKED, ids="+".join)
def test_every_link_a_hand_picked_permission_shows_opens(console, codenames) -> None:
    refused = refused_links(staff_with(*codenames))

    assert refused == [], "\n".join(f"{page} links to {link}" for page, link in refused)


def _text(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(response.content.decode().split())


def _links_to(prefix: str, page: str) -> list[str]:
    """The page's links that start with `prefix` (the navigation's and the index's left
    out: Django offers those by permission)."""
    content = page.split('id="content"', 1)[-1]
    return [href for href in _HREF.findall(content) if href.startswith(prefix)]


def test_a_bad_case_names_its_session_unlinked_for_who_may_not_read_sessions(console) -> None:
    bad = console["bad"]

    page = _text(staff_with("view_badcase").get(f"/admin/feedback/badcase/{bad.pk}/change/"))

    assert "bad-1" in page
    assert _links_to("/admin/diagnosis/", page) == []
    assert "The first 500 of 501 tool invocations are shown" in page


def test_a_session_names_its_case_by_title_for_who_may_not_read_cases(console) -> None:
    session, case = console["useful"], console["case"]

    page = _text(
        staff_with("view_diagnosissession").get(
            f"/admin/diagnosis/diagnosissession/{session.pk}/change/"
        )
    )

    assert html.escape(case.title) in page
    assert _links_to("/admin/caselibrary/caselibrary/", page) == []


def test_a_case_names_its_session_unlinked_for_who_may_not_read_sessions(console) -> None:
    case = console["case"]

    page = _text(
        staff_with("change_caselibrary").get(f"/admin/caselibrary/caselibrary/{case.pk}/change/")
    )

    assert "useful-1" in page
    assert _links_to("/admin/diagnosis/", page) == []


@pytest.mark.parametrize("group", ["viewer", "reviewer", "curator"])
def test_the_staff_groups_keep_every_cross_link(console, group) -> None:
    client = member_of(group)
    useful, bad, case = console["useful"], console["bad"], console["case"]
    session_page = f"/admin/diagnosis/diagnosissession/{useful.pk}/change/"
    case_page = f"/admin/caselibrary/caselibrary/{case.pk}/change/"

    on_bad_case = _text(client.get(f"/admin/feedback/badcase/{bad.pk}/change/"))
    on_session = _text(client.get(session_page))
    on_cases = _text(client.get("/admin/caselibrary/caselibrary/"))
    on_unbacked = _text(client.get("/admin/feedback/usefulwithoutevidence/"))
    on_bad_cases = _text(client.get("/admin/feedback/badcase/"))

    assert f'href="/admin/diagnosis/diagnosissession/{bad.pk}/change/"' in on_bad_case
    assert 'href="/admin/diagnosis/toolinvocation/?session=bad-1"' in on_bad_case
    assert 'href="/admin/diagnosis/toolinvocation/' in on_session
    assert on_session.count(f'href="{case_page}"') == 3  # its case, a search's, the timeline's
    assert f'href="{session_page}"' in on_cases
    assert f'href="/admin/diagnosis/diagnosissession/?found_case={case.pk}"' in on_cases
    assert f'href="{session_page}"' in on_unbacked and f'href="{case_page}"' in on_unbacked
    assert 'href="/admin/feedback/usefulwithoutevidence/"' in on_bad_cases


def test_a_case_made_from_a_correction_is_named_unlinked_for_who_may_not_read_cases(
    console,
) -> None:
    bad = console["bad"]
    client = staff_with("view_badcase", "add_caselibrary")

    response = client.post(
        "/admin/feedback/badcase/",
        {"action": "create_case_from_correction", "_selected_action": [bad.pk], "index": 0},
        follow=True,
    )

    page = _text(response)
    assert "1 case created from a correction:" in page
    assert not re.findall(r"/admin/caselibrary/caselibrary/[0-9a-f-]{36}/change/", page)


# --- A category cases use: its delete address says how many, and where they are ----------

CATEGORIES = "/admin/caselibrary/faultcategory/"


def test_a_category_in_use_says_how_many_cases_use_it_and_links_to_them(console) -> None:
    CaseLibraryFactory(fault_category="STORAGE")
    curator = member_of("curator")

    response = curator.get(f"{CATEGORIES}STORAGE/delete/", follow=True)

    page = _text(response)
    listed = "/admin/caselibrary/caselibrary/?fault_category=STORAGE"
    assert "Move them to another category first." in page
    assert f'<a href="{listed}">See the 2 cases that use it.</a>' in page
    assert _text(curator.get(listed)).count('class="field-title"') == 2


def test_a_category_used_by_one_case_says_so_in_the_singular(console) -> None:
    page = _text(member_of("curator").get(f"{CATEGORIES}STORAGE/delete/", follow=True))

    assert "See the 1 case that uses it." in page


def test_the_count_is_not_a_link_for_who_may_not_read_cases(console) -> None:
    CaseLibraryFactory(fault_category="STORAGE")
    client = staff_with("view_faultcategory", "delete_faultcategory")

    page = _text(client.get(f"{CATEGORIES}STORAGE/delete/", follow=True))

    assert "2 cases use it." in page
    assert _links_to("/admin/caselibrary/caselibrary/?", page) == []
