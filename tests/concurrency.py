"""Many real threads hitting the API at once, each on its own database connection."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection
from rest_framework.test import APIClient


def race(key: str, calls: list[Callable[[APIClient], Any]]) -> list[Any]:
    """Run every call in its own thread, released together; return their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[APIClient], Any]) -> Any:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
        try:
            barrier.wait(timeout=30)
            return call(client)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))
