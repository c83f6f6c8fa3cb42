"""gunicorn settings for metrics in multi-process mode: `gunicorn -c config/gunicorn.conf.py
config.wsgi`. A worker that exits has its live gauges removed from the shared directory
(PROMETHEUS_MULTIPROC_DIR); its counters stay, so totals never go backwards."""

import os


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
