#!/usr/bin/env python
import atexit
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from config.env import exit_on_configuration_error

    atexit.register(_metrics_files_seen_to)
    # A setting the environment lacks or gets wrong (SECRET_KEY without DEBUG, say) stops
    # every command before it starts: one line for each.
    with exit_on_configuration_error():
        execute_from_command_line(sys.argv)


def _metrics_files_seen_to() -> None:
    # Every command, and the servers and workers this file starts (runserver, qcluster),
    # leaves only what it recorded in PROMETHEUS_MULTIPROC_DIR (config.metrics). A process
    # that never loaded the metrics made no file.
    metrics = sys.modules.get("config.metrics")
    if metrics is not None:
        metrics.process_ended()


if __name__ == "__main__":
    main()
