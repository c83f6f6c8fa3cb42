"""`manage.py revoke_api_key` revokes a key from the command line, by its prefix or its
name, as the admin does: the API refuses it at once in this process, and every answer
names keys by name and prefix, never the key."""

import io

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from diagnosis.models import ApiKey

pytestmark = pytest.mark.django_db


def revoke(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("revoke_api_key", *args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return client


def answers(key: str) -> int:
    return client_with(key).get("/api/sessions").status_code


def test_a_key_revoked_by_its_prefix_is_refused_by_the_api_at_once() -> None:
    api_key, key = ApiKey.objects.create_key(name="ci-agent", scope="agent")
    assert answers(key) == 200  # now remembered in the key cache

    output = revoke(api_key.prefix)

    assert answers(key) == 401
    assert ApiKey.objects.get().revoked is True
    assert f"Revoked API key {api_key.prefix}… (agent) of 'ci-agent'" in output
    assert key not in output


def test_a_key_revoked_by_its_name_is_refused_and_the_others_still_work() -> None:
    _leaked, leaked_key = ApiKey.objects.create_key(name="chat-frontend", scope="full")
    _other, other_key = ApiKey.objects.create_key(name="ci-agent", scope="full")
    assert answers(leaked_key) == answers(other_key) == 200

    revoke("chat-frontend")

    assert answers(leaked_key) == 401
    assert answers(other_key) == 200


def test_a_name_several_keys_share_is_refused_without_all_and_names_them() -> None:
    first, _ = ApiKey.objects.create_key(name="agent", scope="agent")
    second, _ = ApiKey.objects.create_key(name="agent", scope="agent")

    with pytest.raises(CommandError) as refused:
        revoke("agent")

    message = str(refused.value)
    assert "2 keys are named 'agent'" in message
    assert first.prefix in message and second.prefix in message
    assert "--all" in message
    assert not ApiKey.objects.filter(revoked=True).exists()


def test_all_revokes_every_key_of_a_shared_name() -> None:
    ApiKey.objects.create_key(name="agent", scope="agent")
    ApiKey.objects.create_key(name="agent", scope="agent")
    kept, _ = ApiKey.objects.create_key(name="agent-2", scope="agent")

    output = revoke("agent", "--all")

    assert set(ApiKey.objects.filter(revoked=True).values_list("name", flat=True)) == {"agent"}
    assert ApiKey.objects.filter(revoked=True).count() == 2
    assert output.count("Revoked API key") == 2
    assert not ApiKey.objects.get(pk=kept.pk).revoked


def test_keys_of_the_name_revoked_before_make_no_ambiguity() -> None:
    old, _ = ApiKey.objects.create_key(name="agent", scope="agent")
    old.revoked = True
    old.save()
    current, key = ApiKey.objects.create_key(name="agent", scope="agent")

    output = revoke("agent")

    assert answers(key) == 401
    assert f"Revoked API key {current.prefix}…" in output


def test_nothing_matching_is_an_error_naming_what_was_looked_for() -> None:
    ApiKey.objects.create_key(name="ci-agent", scope="agent")

    with pytest.raises(CommandError, match="No API key has the prefix or the name 'nobody'"):
        revoke("nobody")

    assert not ApiKey.objects.filter(revoked=True).exists()


def test_a_key_revoked_already_says_so_and_succeeds() -> None:
    api_key, _ = ApiKey.objects.create_key(name="ci-agent", scope="agent")
    api_key.revoked = True
    api_key.save()

    output = revoke(api_key.prefix)

    assert f"API key {api_key.prefix}… of 'ci-agent' was revoked already" in output


def test_the_whole_key_is_taken_for_its_prefix_and_never_shown() -> None:
    api_key, key = ApiKey.objects.create_key(name="leaked", scope="full")

    output = revoke(key)

    assert answers(key) == 401
    assert api_key.prefix in output
    assert key not in output


def test_the_prefix_as_create_api_key_prints_it_is_taken() -> None:
    api_key, key = ApiKey.objects.create_key(name="ci-agent", scope="agent")

    revoke(f"{api_key.prefix}…")

    assert answers(key) == 401


def test_an_empty_argument_is_refused() -> None:
    with pytest.raises(CommandError, match="Say which key"):
        revoke("  ")


def test_a_whole_key_that_matches_nothing_is_named_by_its_prefix_alone() -> None:
    key = "AbCd1234.0123456789abcdef0123456789abcdef"

    with pytest.raises(CommandError) as refused:
        revoke(key)

    assert str(refused.value) == "No API key has the prefix or the name 'AbCd1234'."
