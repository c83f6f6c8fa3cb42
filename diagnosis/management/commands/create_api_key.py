"""Create an API key and print it once; only its hash is stored."""

from typing import Any

from django.core.management.base import BaseCommand

from diagnosis.models import ApiKey, ApiKeyScope


class Command(BaseCommand):
    help = "Create an API key (printed once, stored hashed)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="who uses the key, e.g. 'diagnosis-agent-prod'")
        parser.add_argument(
            "--scope",
            choices=ApiKeyScope.values,
            default=ApiKeyScope.FULL,
            help="agent: report and read sessions; frontend: feedback only; full: everything",
        )

    def handle(self, *args: Any, name: str, scope: str, **options: Any) -> None:
        api_key, key = ApiKey.objects.create_key(name=name[:50], scope=scope)
        self.stderr.write(
            f"Created API key {api_key.prefix}… ({scope}) for {api_key.name!r}. "
            "Store it now: it cannot be shown again."
        )
        # The key alone on stdout, so scripts can capture it: KEY=$(manage.py create_api_key x)
        self.stdout.write(key)
