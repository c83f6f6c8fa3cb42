"""The API's rate limits: a counter per client and window, in Django's cache."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import cache
from rest_framework.test import APIRequestFactory

from diagnosis.models import ApiKey
from feedback.throttling import FeedbackKeyThrottle
from tests.redis_databases import redis_url

# A Redis database of its own, emptied around each test that uses it.
REDIS_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": redis_url("rate_limits"),
    }
}


def a_request_with(api_key: ApiKey):
    request = APIRequestFactory().post("/api/feedback")
    request.auth = api_key
    return request


def allowed(api_key: ApiKey) -> bool:
    return FeedbackKeyThrottle().allow_request(a_request_with(api_key), view=None)


@pytest.fixture
def fresh_cache():
    cache.clear()
    yield cache
    cache.clear()


@pytest.fixture
def redis_cache(settings):
    settings.CACHES = REDIS_CACHE
    cache.clear()
    yield cache
    cache.clear()


def test_a_key_is_refused_past_its_limit_and_told_when_to_retry(settings, fresh_cache) -> None:
    settings.FEEDBACK_RATE_LIMIT = "3/min"
    api_key = ApiKey(prefix="limit-one")

    answers = [allowed(api_key) for _ in range(4)]
    throttle = FeedbackKeyThrottle()
    throttle.allow_request(a_request_with(api_key), view=None)

    assert answers == [True, True, True, False]
    assert 1 <= throttle.wait() <= 60


def test_a_busy_local_cache_does_not_drop_a_keys_count(settings, fresh_cache) -> None:
    settings.FEEDBACK_RATE_LIMIT = "3/min"
    api_key = ApiKey(prefix="limit-busy")
    first = [allowed(api_key) for _ in range(3)]
    # What else the process caches: other clients' counters, API keys, search statistics.
    cache.set_many({f"other-{n}": n for n in range(1_000)})

    assert first == [True, True, True]
    assert allowed(api_key) is False


def test_each_key_has_its_own_limit(settings, fresh_cache) -> None:
    settings.FEEDBACK_RATE_LIMIT = "2/min"
    busy, quiet = ApiKey(prefix="busy"), ApiKey(prefix="quiet")

    [allowed(busy) for _ in range(3)]

    assert allowed(quiet)
    assert not allowed(busy)


@pytest.mark.slow
def test_a_refused_key_is_let_through_again_once_its_window_is_over(settings, fresh_cache) -> None:
    settings.FEEDBACK_RATE_LIMIT = "2/s"
    api_key = ApiKey(prefix="window")

    first = [allowed(api_key) for _ in range(3)]
    time.sleep(1.2)

    assert first == [True, True, False]
    assert allowed(api_key)


def test_a_busy_keys_count_is_one_number_in_the_cache_not_a_list_of_its_requests(
    settings, fresh_cache
) -> None:
    settings.FEEDBACK_RATE_LIMIT = "100000/min"
    api_key = ApiKey(prefix="busy-cost")

    for _ in range(5000):
        allowed(api_key)

    # One counter, not a list of every request's time in the window.
    assert cache.get(FeedbackKeyThrottle().get_cache_key(a_request_with(api_key), None)) == 5000


def test_concurrent_requests_through_the_shared_cache_never_pass_more_than_the_limit(
    settings, redis_cache
) -> None:
    settings.FEEDBACK_RATE_LIMIT = "40/min"
    api_key = ApiKey(prefix="racing")

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: allowed(api_key), range(120)))

    assert answers.count(True) == 40
