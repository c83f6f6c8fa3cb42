"""Benchmark of the hot paths at scale (issue 7). Not part of the test suite.

Run with `make bench SCALE=small|medium|full` or `python -m tests.bench.run --help`.
No module here starts with `test_`, so pytest never collects it.
"""
