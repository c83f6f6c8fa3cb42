"""The real settings, plus the floor views mounted only for the benchmark."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "tests.bench.urls"
