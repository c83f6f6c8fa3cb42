"""gunicorn settings: `gunicorn -c config/gunicorn.conf.py config.wsgi`. A worker that
exits has its live gauges removed from the shared directory of metrics in multi-process
mode (PROMETHEUS_MULTIPROC_DIR); its counters stay, so totals never go backwards. With
CASE_SEARCH_WARM_ON_START, a worker loads what a search needs as it starts."""

import os


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    from django.conf import settings

    if settings.CASE_SEARCH_WARM_ON_START:
        from caselibrary.services.search import search_warm_in_background

        search_warm_in_background()
