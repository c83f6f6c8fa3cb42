"""Values the cache only keeps to make a page faster (the overview's figures for a
minute): while the cache (Redis) cannot be reached, the page computes them each time, as
it would on a miss, instead of answering 503. An operator needs the console most during
an outage; the API, whose keys and limits live in the cache, answers 503 meanwhile
(config/middleware.py)."""

import logging
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache

from config.middleware import is_cache_outage

logger = logging.getLogger(__name__)

T = TypeVar("T")


def cached_or_computed(key: str, compute: Callable[[], T], seconds: int) -> T:
    """The cached value of `key`, else `compute()`, kept for `seconds`; computed each
    time while the cache cannot be reached."""
    try:
        value = cache.get(key)
    except Exception as exc:
        if not is_cache_outage(exc):
            raise
        logger.debug("cache unreachable, %s computed afresh: %s", key, exc.__class__.__name__)
        return compute()
    if value is None:
        value = compute()
        try:
            cache.set(key, value, seconds)
        except Exception as exc:
            if not is_cache_outage(exc):
                raise
    return value
