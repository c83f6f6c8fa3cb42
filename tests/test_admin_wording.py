"""What an operator reads in the console's Chinese (its default): bad cases, API keys and
the history, each thing called by one name, nothing said twice."""

import re

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.utils.text import capfirst
from django.utils.translation import gettext, override

from caselibrary.models import CaseLibrary, FaultCategory
from diagnosis.models import ApiKey, ToolCatalogEntry
from feedback.models import ReviewTag
from feedback.review_queues import bad_cases_assign
from tests.admin_pages import list_edit_post
from tests.admin_wording_pages import CASES, SESSIONS, in_english
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FeedbackEntryFactory,
    evaluation,
)
from tests.page_text import text

pytestmark = pytest.mark.django_db


BAD_CASES = "/admin/feedback/badcase/"


API_KEYS = "/admin/diagnosis/apikey/"


def act(client, action: str, *sessions, **extra: object):  # type: ignore[no-untyped-def]
    return client.post(
        BAD_CASES,
        {"action": action, "_selected_action": [s.pk for s in sessions], "index": 0, **extra},
        follow=True,
    )


# --- bad cases ---------------------------------------------------------------------------


@pytest.fixture
def refused():  # type: ignore[no-untyped-def]
    """Two bad cases no case can be made of: one without a correction, one with a case."""
    silent = DiagnosisSessionFactory(session_id="bad-silent", not_useful=True)
    FeedbackEntryFactory(session=silent, correction="")
    cased = DiagnosisSessionFactory(session_id="bad-cased", not_useful=True)
    FeedbackEntryFactory(session=cased)
    CaseLibraryFactory(diagnosis_id="bad-cased")
    return silent, cased


def test_a_case_refused_from_a_correction_is_explained_in_chinese(admin_client, refused) -> None:
    page = text(act(admin_client, "create_case_from_correction", *refused))

    assert "没有用户为这个会话提交更正。 (bad-silent)" in page
    assert "这个会话已有案例：请直接编辑那个案例。 (bad-cased)" in page
    assert "No reader sent" not in page and "already has a case" not in page


def test_the_same_refusals_read_in_english_for_an_operator_who_chose_english(
    admin_client, refused
) -> None:
    in_english(admin_client)

    page = text(act(admin_client, "create_case_from_correction", *refused))

    assert "No reader sent a correction for this session. (bad-silent)" in page
    assert "This session already has a case: edit that case instead. (bad-cased)" in page


@pytest.fixture
def two_bad_cases():  # type: ignore[no-untyped-def]
    return [DiagnosisSessionFactory(session_id=f"bad-{n}", not_useful=True) for n in (1, 2)]


def test_the_queue_actions_call_bad_cases_by_the_models_name(admin_client, two_bad_cases) -> None:
    page = text(admin_client.get(BAD_CASES))

    assert "<title>选择 不良案例 来修改" in page
    assert "把选中的不良案例分配给我" in page and "给选中的不良案例加上标签" in page
    assert "坏案例" not in page


def test_assigning_and_tagging_report_bad_cases_by_the_models_name(
    admin_client, two_bad_cases
) -> None:
    assigned = text(act(admin_client, "assign_to_me", *two_bad_cases))
    tagged = text(act(admin_client, "add_tag", *two_bad_cases, tag="dns"))

    assert "已把 2 个不良案例分配给 admin。" in assigned
    assert "已给 2 个不良案例加上标签 dns。" in tagged
    assert "坏案例" not in assigned + tagged


def test_unassigning_says_the_assignee_was_removed_not_assigned_to_nobody(
    admin_client, admin_user, two_bad_cases
) -> None:
    bad_cases_assign(session_ids=[s.session_id for s in two_bad_cases], assignee=admin_user)

    page = text(act(admin_client, "unassign", *two_bad_cases))

    assert "已取消 2 个不良案例的处理人。" in page
    assert "无人" not in page


def test_unassigning_reads_naturally_in_english_too(
    admin_client, admin_user, two_bad_cases
) -> None:
    bad_cases_assign(session_ids=[s.session_id for s in two_bad_cases], assignee=admin_user)
    in_english(admin_client)

    page = text(act(admin_client, "unassign", *two_bad_cases))

    assert "2 bad cases unassigned." in page and "nobody" not in page


# --- API keys ----------------------------------------------------------------------------


def column_headers(page: str) -> list[str]:
    return re.findall(r'<th scope="col" class="[^"]*">.*?<a href="[^"]*">([^<]+)</a>', page)


def test_the_api_key_list_names_its_columns_and_filters_in_chinese(admin_client) -> None:
    ApiKey.objects.create_key(name="agent-backend", scope="agent")

    page = text(admin_client.get(API_KEYS))

    assert column_headers(page) == [
        "前缀",
        "名称",
        "权限范围",
        "创建时间",
        "过期时间",
        "已吊销",
    ]
    assert '<th scope="col" class="column-key_has_expired"> <div class="text"><span>已过期' in page
    assert 'data-filter-title="是否吊销"' in page and "以 是否吊销" in page
    assert "revoked" not in re.sub(r'(class|href|data-[a-z-]+)="[^"]*"', "", page)


def test_the_add_form_labels_and_explains_each_field_in_chinese(admin_client) -> None:
    page = text(admin_client.get(f"{API_KEYS}add/"))

    assert '<label class="required" for="id_name">名称:</label>' in page
    assert "API 密钥的名称，随意填写，可以重复，最多 50 个字符。" in page
    assert '<label class="vCheckboxLabel" for="id_revoked">已吊销</label>' in page
    assert "吊销后，客户端不能再使用这个 API 密钥。（吊销无法撤销。）" in page
    assert "<label>过期时间:</label>" in page
    assert "API 密钥过期后，客户端不能再使用它。" in page
    assert "free-form" not in page and "clients cannot" not in page


def test_a_key_made_by_hand_starts_with_the_agent_scope_not_full(admin_client) -> None:
    page = text(admin_client.get(f"{API_KEYS}add/"))

    assert '<option value="agent" selected>' in page
    assert '<option value="full">' in page


def test_a_new_key_is_shown_once_in_chinese_and_works(admin_client) -> None:
    response = admin_client.post(
        f"{API_KEYS}add/",
        {"name": "chat-ui", "scope": "frontend", "expiry_date_0": "", "expiry_date_1": ""},
        follow=True,
    )

    page = text(response)
    shown = re.search(
        r"“chat-ui”的 API 密钥是：(\w{8}\.\w{32})。请妥善保存：此后无法再次查看。", page
    )
    assert shown is not None, page
    key = ApiKey.objects.get_from_key(shown.group(1))
    assert (key.name, key.scope) == ("chat-ui", "frontend")
    assert "The API key for" not in page


def test_a_new_key_is_shown_in_english_to_an_operator_who_chose_english(admin_client) -> None:
    in_english(admin_client)

    page = text(
        admin_client.post(f"{API_KEYS}add/", {"name": "chat-ui", "scope": "agent"}, follow=True)
    )

    assert re.search(
        r"The API key for chat-ui is: \w{8}\.\w{32}\. Please store it somewhere safe: "
        r"you will not be able to see it again\.",
        page,
    )


def test_a_revoked_key_is_shown_read_only_with_chinese_labels(admin_client) -> None:
    key, _ = ApiKey.objects.create_key(name="old-agent", scope="agent")
    key.revoked = True
    key.save()

    page = text(admin_client.get(f"{API_KEYS}{key.pk}/change/"))

    assert "<label>前缀:</label>" in page and f'<div class="readonly">{key.prefix}</div>' in page
    assert "<label>名称:</label>" in page and "<label>已吊销:</label>" in page
    assert 'name="name"' not in page and 'name="revoked"' not in page


# --- history and the session page --------------------------------------------------------

EDITED_IN_THE_ADMIN = [CaseLibrary, FaultCategory, ReviewTag, ToolCatalogEntry, ApiKey]


@pytest.mark.parametrize("model", EDITED_IN_THE_ADMIN, ids=lambda m: m._meta.model_name)
def test_every_field_an_operator_edits_is_named_in_chinese_in_the_history(
    model, admin_user
) -> None:
    # Django records a change under the form field's English label and translates it
    # when the history is read.
    request = RequestFactory().get("/")
    request.user = admin_user
    model_admin = admin.site._registry[model]
    with override(None):
        labels = {
            name: str(field.label or capfirst(name))
            for name, field in model_admin.get_form(request)().fields.items()
        }
    with override("zh-hans"):
        untranslated = {n: label for n, label in labels.items() if gettext(label) == label}

    assert untranslated == {}


def test_a_case_edited_from_the_list_is_recorded_in_chinese(admin_client) -> None:
    case = CaseLibraryFactory(fault_category="GENERAL", error_code=None)
    data = list_edit_post(
        [{"case_id": case.pk, "fault_category": "DATABASE", "error_code": "ORA-00060"}]
    )
    assert admin_client.post(CASES, data).status_code == 302

    history = text(admin_client.get(f"{CASES}{case.pk}/history/"))

    assert "已修改故障分类 和 错误码。" in history


def test_a_case_edited_on_its_page_is_recorded_in_chinese(admin_client) -> None:
    case = CaseLibraryFactory(title="Deadlock", fault_category="DATABASE")
    response = admin_client.post(
        f"{CASES}{case.pk}/change/",
        {
            "title": "Deadlock on orders",
            "fault_category": "DATABASE",
            "error_code": "",
            "root_cause": "A new cause",
            "solution": case.solution,
        },
    )
    assert response.status_code == 302

    history = text(admin_client.get(f"{CASES}{case.pk}/history/"))

    assert "已修改标题 和 根因。" in history


def test_the_session_page_says_who_scored_and_when_once_each_in_chinese(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=65)
    session.self_evaluation = {
        **evaluation(65),
        "llm_opinion": {
            "source": "heuristic",
            "model": "heuristic",
            "version": "2",
            "factors": [{"name": "has_root_cause", "value": True, "rationale": "x"}],
            "created_at": "2026-12-05T17:47:36.184945+00:00",
        },
    }
    session.save()

    page = text(admin_client.get(f"{SESSIONS}{session.pk}/change/"))

    assert "<caption>启发式 · 版本 2 · 2026年12月5日 17:47</caption>" in page
    assert '<small title="rule">规则评分</small>' in page
    assert "heuristic · heuristic" not in page and "17:47:36" not in page


def test_an_opinion_from_a_model_names_the_model_once(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=30)
    session.self_evaluation = {
        **evaluation(30),
        "llm_opinion": {
            "source": "llm",
            "model": "qwen-max",
            "version": "1",
            "factors": [],
            "created_at": "2026-12-03T12:00:00+00:00",
        },
    }
    session.save()

    page = text(admin_client.get(f"{SESSIONS}{session.pk}/change/"))

    assert "<caption>大模型 · qwen-max · 版本 1 · 2026年12月3日 12:00</caption>" in page
