"""gunicorn settings: `gunicorn -c config/gunicorn.conf.py config.wsgi`. The master reads
the service's settings before it starts a worker: a bad one stops gunicorn with a line
per bad variable and exit status 1, where each worker would otherwise print a traceback
and fail to boot. A worker that exits has its live gauges removed from the shared
directory of metrics in multi-process mode (PROMETHEUS_MULTIPROC_DIR); its counters stay,
so totals never go backwards. With CASE_SEARCH_WARM_ON_START, a worker loads what a
search needs as it starts."""

import os


def on_starting(server):  # type: ignore[no-untyped-def]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    from config.env import exit_on_configuration_error

    with exit_on_configuration_error():
        # Reading one setting reads them all, as manage.py does before any command.
        settings.INSTALLED_APPS  # noqa: B018


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    from django.conf import settings

    if settings.CASE_SEARCH_WARM_ON_START:
        from caselibrary.services.search import search_warm_in_background

        search_warm_in_background()
