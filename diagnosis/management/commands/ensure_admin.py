"""Create (or reset) the development admin account and print its password."""

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from diagnosis.management.commands._base import ServiceCommand


class Command(ServiceCommand):
    help = "Create or reset a superuser with a fresh random password and print it (DEBUG only)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="http://127.0.0.1:8000/admin/")

    def handle(self, *args: Any, username: str, url: str, **options: Any) -> None:
        password = admin_ensure(username=username)
        self.stdout.write(admin_login_lines(url=url, username=username, password=password))


def admin_ensure(*, username: str) -> str:
    """Make `username` a superuser with a fresh random password, and return the password."""
    # Printing a password is only acceptable on a developer's own machine.
    if not settings.DEBUG:
        raise CommandError("ensure_admin only runs with DEBUG=1; use createsuperuser.")
    username = username.strip()
    if not username:
        raise CommandError("--username must not be empty.")
    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=username)
    user.is_staff = True
    user.is_superuser = True
    user.set_password(password)
    user.save()
    return password


def admin_login_lines(*, url: str, username: str, password: str) -> str:
    return f"  Admin console: {url}\n  user:          {username}\n  password:      {password}"
