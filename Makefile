# Two commands matter (see README.md):
#   make run    set everything up and run the service (web + task worker)
#   make test   run the test suite (SQLite by default; DATABASE_URL=mysql://... for MariaDB)
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
SCALE ?= small

# The benchmark measures MariaDB unless told otherwise; it truncates the app's tables of
# its database, whose name must contain "bench".
ifneq ($(filter bench,$(MAKECMDGOALS)),)
DATABASE_URL ?= mysql://root@127.0.0.1:3306/diagnosis_bench
endif
BENCH_ARGS ?=

# mysqlclient is compiled from source: only install it where MySQL/MariaDB is used.
comma := ,
# Some machines' pip configuration names index folders that do not exist; pip says so
# once per package. Not our problem to report.
PIP_NOISE := is ignored: it is neither a file nor a directory
ifneq ($(filter mysql% mariadb%,$(DATABASE_URL)),)
RUN_EXTRAS := mysql
TEST_EXTRAS := test$(comma)mysql
else
RUN_EXTRAS :=
TEST_EXTRAS := test
endif

# CASE_SEARCH_BACKEND=milvus: `make run` also installs the Milvus client.
ifeq ($(CASE_SEARCH_BACKEND),milvus)
RUN_EXTRAS := $(if $(RUN_EXTRAS),$(RUN_EXTRAS)$(comma))milvus
endif

.PHONY: help run test test-fast deps lint format bench clean

help:
	@echo "make run        set up and run the service on http://$(HOST):$(PORT)/admin/"
	@echo "make test       run every test (DATABASE_URL=mysql://... to run them on MariaDB)"
	@echo "make test-fast  run the fast tests only (no browser, no real processes, nothing slow)"
	@echo "make lint       ruff check + ruff format --check + the import contracts (lint-imports)"
	@echo "make bench      benchmark the hot paths (SCALE=small|medium|full, BENCH_ARGS=--skip-generate)"
	@echo "make deps       install every set of packages run and test use (SQLite and MariaDB)"
	@echo "make format     ruff check --fix + ruff format"
	@echo "make clean      remove the virtualenv, the SQLite database and collected static files"

# $(call venv,<extras>): create the virtualenv when missing, (re)install when
# pyproject.toml changed since the last install of these extras.
define venv
	@test -x $(PY) || python3 -m venv $(VENV)
	@stamp="$(VENV)/.installed-$(subst $(comma),-,$(1))"; spec=".[$(1)]"; [ -n "$(1)" ] || spec="."; \
	if [ ! -f "$$stamp" ] || [ pyproject.toml -nt "$$stamp" ]; then \
		echo "Installing dependencies into $(VENV) ..."; \
		$(PY) -m pip install --quiet --upgrade pip 2>&1 | grep -v "$(PIP_NOISE)"; \
		$(PY) -m pip install --quiet "$$spec" 2>&1 | grep -v "$(PIP_NOISE)"; \
		[ "$${PIPESTATUS[0]}" -eq 0 ] && touch "$$stamp"; \
	fi
endef

# Quiet set-up, then devserver: the web server in this terminal, the worker's log in
# var/log/worker.log, and last of all the admin login (a fresh password each run).
run:
	$(call venv,$(RUN_EXTRAS))
	@export DEBUG=$${DEBUG:-1}; \
	echo "Migrating the database and loading the demo data ..."; \
	$(PY) manage.py migrate --noinput --verbosity 0 && \
	$(PY) manage.py load_demo_data && \
	exec $(PY) manage.py devserver $(HOST):$(PORT) --admin admin

test:
	$(call venv,$(TEST_EXTRAS))
	$(PY) -m pytest $(PYTEST_ARGS)

# Every set of packages `make run` and `make test` install (SQLite and MariaDB), one after
# the other: CI runs the two test runs side by side, which must not install at once.
deps:
	$(call venv,)
	$(call venv,test)
	$(call venv,test$(comma)mysql)

test-fast:
	$(call venv,$(TEST_EXTRAS))
	$(PY) -m pytest -m "not slow and not integration and not browser" $(PYTEST_ARGS)

# Not part of the test suite: see docs/benchmarks.md. wrk comes from Debian.
bench:
	$(call venv,$(TEST_EXTRAS))
	DATABASE_URL="$(DATABASE_URL)" $(PY) -m tests.bench.run --scale $(SCALE) $(BENCH_ARGS)

lint:
	$(call venv,test)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

format:
	$(call venv,test)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles .pytest_cache
