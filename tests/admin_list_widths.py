"""What the admin's lists are measured with in a browser: the taxonomy the seed migration
gives, a long question, and a superuser who sees every list."""

from importlib import import_module

import pytest
from django.contrib.auth.models import User

from tests.test_admin_browser import PASSWORD

# The taxonomy the seed migration gives a new console (an earlier transactional test may
# have flushed its rows).
SEEDED_CATEGORIES = import_module("caselibrary.migrations.0003_seed_fault_categories").CATEGORIES

QUESTION = "订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时"


@pytest.fixture
def admin_user(transactional_db) -> User:  # type: ignore[no-untyped-def]
    """A superuser: sees every list, and a checkbox column on each that has actions."""
    return User.objects.create_superuser("ops.admin", password=PASSWORD)
