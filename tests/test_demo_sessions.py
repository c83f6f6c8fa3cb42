"""The demo session generator: the same seed gives the same sessions, from the data files."""

import dataclasses
import hashlib
import json
import subprocess
import sys

from feedback.demo.sessions import DEFAULT_SEED, demo_sessions
from tests.processes import ROOT

# SHA-256 of the default demo data set (300 sessions, seed 20261202), computed from the
# generator as it was before its vocabulary moved into JSON files (diagnosis/demo_data.py
# at 9ee9f95) with `_digest(demo_sessions(300))` below. A change to it changes what
# `make run` shows and what the tests and the benchmark were measured on.
DEFAULT_DIGEST = "54e26382defae59dd0d0021db7dc28a194ed15e4dbbaee4e60394ba9552a0074"


def _digest(sessions: list) -> str:
    blob = json.dumps(
        [dataclasses.asdict(s) for s in sessions], ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def test_the_default_seed_gives_the_same_bytes_as_before_the_vocabulary_moved() -> None:
    assert _digest(demo_sessions()) == DEFAULT_DIGEST


def test_more_sessions_append_to_the_same_first_ones() -> None:
    assert demo_sessions(340)[:300] == demo_sessions(300)
    assert demo_sessions(40, seed=DEFAULT_SEED + 1) != demo_sessions(40)


def test_sessions_are_consistent_with_their_status() -> None:
    sessions = demo_sessions()
    assert len({s.session_id for s in sessions}) == len(sessions)
    for s in sessions:
        assert (s.answer is not None) == (s.status == "SUCCESS")
        assert s.feedback is None or s.status == "SUCCESS"
        ids = [inv.invocation_id for inv in s.invocations]
        assert len(set(ids)) == len(ids)
        for inv in s.invocations:
            assert (inv.match_level in (None, "NONE")) == (inv.hit_count == 0)
            assert (inv.error_message is not None) == (inv.status == "FAILED")


def test_the_generator_runs_from_the_checkout_without_django() -> None:
    # Pure on purpose: the benchmark and fixtures use it without a configured Django.
    code = (
        "import sys; from feedback.demo.sessions import demo_sessions; demo_sessions(5); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
