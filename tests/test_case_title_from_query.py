"""An automatic case's title is the question's first 100 characters, or, when those are
blanks (OTLP keeps a question as the agent sent it, and `import_cases` refuses a title of
blanks), the first 100 of its words."""

import pytest

from caselibrary.models import CaseLibrary
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def useful_case_title(query: str) -> str:
    session = DiagnosisSessionFactory(succeeded=True, query=query)
    case_id = feedback_submit(session_id=session.session_id, feedback="useful").case_id
    return CaseLibrary.objects.get(case_id=case_id).title


def test_a_question_with_leading_blanks_gives_a_title_of_its_words() -> None:
    question = "订单服务调用支付网关超时，" * 10

    assert useful_case_title(" " * 150 + question + "\n\t ") == question[:100]


def test_a_question_with_a_few_blanks_in_front_keeps_its_first_100_characters() -> None:
    assert useful_case_title("  " + "a" * 98 + "   b") == "  " + "a" * 98


def test_a_question_of_blanks_only_gives_the_session_id_as_title() -> None:
    session = DiagnosisSessionFactory(session_id="otlp-4bf92f35", succeeded=True, query=" " * 150)

    case_id = feedback_submit(session_id=session.session_id, feedback="useful").case_id

    assert CaseLibrary.objects.get(case_id=case_id).title == "otlp-4bf92f35"
