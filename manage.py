#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A setting the environment lacks or gets wrong (SECRET_KEY without DEBUG, say)
        # stops every command before it starts: say which, in one line.
        sys.exit(f"Configuration error: {exc}")


if __name__ == "__main__":
    main()
