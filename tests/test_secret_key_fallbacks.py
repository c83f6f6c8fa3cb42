"""SECRET_KEY_FALLBACKS: the keys SECRET_KEY had before, so that rotating it keeps the
feedback tokens handed out and the admins signed in until they expire. Each must be as
strong as SECRET_KEY must be, and a bad one stops start-up without showing it."""

import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from diagnosis.feedback_tokens import feedback_token_for
from tests.factories import DiagnosisSessionFactory
from tests.test_settings import ROOT, load_settings, production_env, refusal

STRONG_KEY = "prod-" + "k3y" * 20
OLD_KEY = "old-" + "0ld" * 20
OLDER_KEY = "older-" + "x9z" * 20
WEAK_KEY = "old-but-short-9"


# --- Reading the variable ---------------------------------------------------------------


def test_there_are_no_fallbacks_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        load_settings(monkeypatch, DEBUG="0", SECRET_KEY=STRONG_KEY)["SECRET_KEY_FALLBACKS"] == []
    )


def test_fallbacks_are_comma_separated_without_spaces_or_empty_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(
        monkeypatch,
        DEBUG="0",
        SECRET_KEY=STRONG_KEY,
        SECRET_KEY_FALLBACKS=f" {OLD_KEY} ,, {OLDER_KEY},",
    )

    assert loaded["SECRET_KEY_FALLBACKS"] == [OLD_KEY, OLDER_KEY]


@pytest.mark.parametrize(
    ("key", "why"),
    [
        (WEAK_KEY, "15 characters"),
        ("ab" * 40, "2 different characters"),
        ("django-insecure-" + "x3k9" * 12, "Django's start-project key"),
    ],
)
def test_a_weak_fallback_stops_production_start_up_naming_its_position_not_its_value(
    monkeypatch: pytest.MonkeyPatch, key: str, why: str
) -> None:
    [line] = refusal(
        monkeypatch, DEBUG="0", SECRET_KEY=STRONG_KEY, SECRET_KEY_FALLBACKS=f"{OLD_KEY},{key}"
    )

    assert line.startswith("SECRET_KEY_FALLBACKS ")
    assert f"entry 2: {why}" in line
    assert "at least 50 characters" in line
    assert key not in line and OLD_KEY not in line


def test_every_bad_fallback_is_named_on_the_variables_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    [line] = refusal(
        monkeypatch,
        DEBUG="0",
        SECRET_KEY=STRONG_KEY,
        SECRET_KEY_FALLBACKS=f"{WEAK_KEY},{OLD_KEY},{STRONG_KEY}",
    )

    assert "entry 1: 15 characters" in line
    assert "entry 3: SECRET_KEY itself" in line
    assert "entry 2" not in line
    assert WEAK_KEY not in line and STRONG_KEY not in line


def test_a_fallback_equal_to_the_secret_key_is_refused_in_development_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    [line] = refusal(monkeypatch, DEBUG="1", SECRET_KEY="dev", SECRET_KEY_FALLBACKS="dev")

    assert line.startswith("SECRET_KEY_FALLBACKS ")
    assert "entry 1: SECRET_KEY itself" in line


def test_a_weak_fallback_is_kept_for_development(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", SECRET_KEY="dev", SECRET_KEY_FALLBACKS="old")

    assert loaded["SECRET_KEY_FALLBACKS"] == ["old"]


def test_fallbacks_are_judged_once_debug_is_right(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = refusal(
        monkeypatch, DEBUG="maybe", SECRET_KEY=STRONG_KEY, SECRET_KEY_FALLBACKS=WEAK_KEY
    )

    assert [line.split()[0] for line in lines] == ["DEBUG"]


@pytest.mark.integration
def test_a_command_with_a_bad_fallback_names_it_on_one_line_without_the_secret() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=production_env(SECRET_KEY_FALLBACKS=f"{OLD_KEY}, {WEAK_KEY}"),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert result.stderr.startswith("Configuration error: SECRET_KEY_FALLBACKS ")
    assert "entry 2: 15 characters" in result.stderr
    assert "Traceback" not in result.stderr
    output = result.stdout + result.stderr
    assert WEAK_KEY not in output and OLD_KEY not in output and STRONG_KEY not in output


@pytest.mark.integration
def test_good_fallbacks_pass_the_deployment_checks() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(SECRET_KEY_FALLBACKS=f"{OLD_KEY},{OLDER_KEY}"),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stdout + result.stderr


# --- Rotating the key -------------------------------------------------------------------


@pytest.fixture
def rotated(settings):  # type: ignore[no-untyped-def]
    """Call it to move from OLD_KEY to STRONG_KEY, keeping OLD_KEY as a fallback or not."""
    settings.SECRET_KEY = OLD_KEY
    settings.SECRET_KEY_FALLBACKS = []

    def rotate(*, keep_old: bool) -> None:
        settings.SECRET_KEY = STRONG_KEY
        settings.SECRET_KEY_FALLBACKS = [OLD_KEY] if keep_old else []

    return rotate


def feedback_with(token: str):  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}")
    return client.post("/api/feedback", {"sessionId": "rot-1", "feedback": "useful"}, format="json")


@pytest.mark.django_db
@pytest.mark.parametrize(("keep_old", "status"), [(True, 200), (False, 403)])
def test_a_feedback_token_from_before_a_rotation_is_good_while_its_key_is_a_fallback(
    rotated, keep_old: bool, status: int
) -> None:
    cache.clear()  # the feedback rate limits
    DiagnosisSessionFactory(session_id="rot-1", succeeded=True)
    token = feedback_token_for(session_id="rot-1")

    rotated(keep_old=keep_old)

    assert feedback_with(token).status_code == status


@pytest.mark.django_db
@pytest.mark.parametrize(("keep_old", "signed_in"), [(True, True), (False, False)])
def test_an_admin_signed_in_before_a_rotation_stays_signed_in_while_its_key_is_a_fallback(
    rotated, keep_old: bool, signed_in: bool
) -> None:
    admin = Client()
    admin.force_login(
        get_user_model().objects.create_user("ops.admin", is_staff=True, is_superuser=True)
    )
    assert admin.get("/admin/").status_code == 200

    rotated(keep_old=keep_old)

    assert (admin.get("/admin/").status_code == 200) is signed_in
