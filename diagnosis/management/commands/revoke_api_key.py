"""Revoke an API key by its prefix or its name, as the admin does; never shows a key."""

from typing import Any

from django.core.management.base import CommandError

from diagnosis.apikeys import ApiKeyAmbiguous, ApiKeyNotFound, api_keys_revoke
from diagnosis.management.commands._base import ServiceCommand
from diagnosis.models import ApiKey


class Command(ServiceCommand):
    help = (
        "Revoke the API key with this prefix, or the key with this name (--all for every "
        "key of a name several share). Refused by every web process within "
        "API_KEY_CACHE_SECONDS."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "key", metavar="prefix-or-name", help="the key's prefix (as the admin lists it) or name"
        )
        parser.add_argument(
            "--all",
            action="store_true",
            dest="every",
            help="revoke every key of the name, when several share it",
        )

    def handle(self, *args: Any, key: str, every: bool, **options: Any) -> None:
        wanted = key.strip()
        if not wanted:
            raise CommandError("Say which key: its prefix (as the admin lists it) or its name.")
        try:
            revocation = api_keys_revoke(prefix_or_name=wanted, every=every)
        except ApiKeyNotFound as exc:
            raise CommandError(
                f"No API key has the prefix or the name {exc.looked_for!r}."
            ) from exc
        except ApiKeyAmbiguous as exc:
            named = all(api_key.name == exc.looked_for for api_key in exc.keys)
            what = "are named" if named else "have the prefix or the name"
            what = f"{what} {exc.looked_for!r}"
            raise CommandError(
                f"{len(exc.keys)} keys {what} (not revoked yet): "
                f"{', '.join(shown(api_key) for api_key in exc.keys)}. Give the prefix of "
                "the one to revoke, or --all to revoke them all."
            ) from exc
        for api_key in revocation.revoked:
            self.stdout.write(f"Revoked API key {shown(api_key)} of {api_key.name!r}.")
        for api_key in revocation.revoked_before:
            self.stdout.write(f"API key {api_key.prefix}… of {api_key.name!r} was revoked already.")


def shown(api_key: ApiKey) -> str:
    """The key as the admin lists it: its prefix and scope, never the key."""
    return f"{api_key.prefix}… ({api_key.scope})"
