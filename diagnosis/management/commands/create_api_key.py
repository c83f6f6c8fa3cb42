"""Create an API key and print it once; only its hash is stored."""

from typing import Any

from django.core.management.base import CommandError

from diagnosis.management.commands._base import ServiceCommand
from diagnosis.models import ApiKey, ApiKeyScope

NAME_MAX_LENGTH = ApiKey._meta.get_field("name").max_length


class Command(ServiceCommand):
    help = "Create an API key (printed once, stored hashed)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="who uses the key, e.g. 'diagnosis-agent-prod'")
        parser.add_argument(
            "--scope",
            choices=ApiKeyScope.values,
            default=ApiKeyScope.FULL,
            help=(
                "agent: report and read sessions; frontend: feedback only; curator: add "
                "cases (POST /api/cases); full: everything"
            ),
        )

    def handle(self, *args: Any, name: str, scope: str, **options: Any) -> None:
        name = name.strip()
        if not name:
            raise CommandError("Give the key a name: who uses it, e.g. 'diagnosis-agent-prod'.")
        if len(name) > NAME_MAX_LENGTH:
            # Cut short, two keys could end up with the same name: refuse instead.
            raise CommandError(f"The name is {len(name)} characters; at most {NAME_MAX_LENGTH}.")
        api_key, key = ApiKey.objects.create_key(name=name, scope=scope)
        self.stderr.write(
            f"Created API key {api_key.prefix}… ({scope}) for {api_key.name!r}. "
            "Store it now: it cannot be shown again."
        )
        # The key alone on stdout, so scripts can capture it: KEY=$(manage.py create_api_key x)
        self.stdout.write(key)
