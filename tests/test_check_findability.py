"""check_findability --sample: a positive number, or left out to check every case."""

import io

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("sample", ["0", "-3"])
def test_a_sample_below_one_is_refused_naming_sample(sample: str) -> None:
    with pytest.raises(
        CommandError,
        match=rf"^--sample must be positive, got {sample} \(leave it out to check every case\)",
    ):
        call_command("check_findability", "--sample", sample, stdout=io.StringIO())


def test_the_help_says_what_leaving_sample_out_does() -> None:
    command = load_command_class("caselibrary", "check_findability")
    parser = command.create_parser("manage.py", "check_findability")

    assert "every case without it" in " ".join(parser.format_help().split())
