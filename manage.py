#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from config.env import exit_on_configuration_error

    # A setting the environment lacks or gets wrong (SECRET_KEY without DEBUG, say) stops
    # every command before it starts: one line for each.
    with exit_on_configuration_error():
        execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
