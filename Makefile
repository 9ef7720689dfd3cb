# Tailboard: `make run` serves a demo instance, `make test` runs every test.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
HOST   ?= 127.0.0.1
PORT   ?= 5000
export TAILBOARD_DATA_DIR ?= $(CURDIR)/instance

.PHONY: run test lint install install-test system-deps serve migrate demo bench clean

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test system-deps

# Debian's chromium for the browser tests (never `playwright install`), nginx for the deploy tests.
# Waits (up to 5 minutes) for another apt or dpkg run to let go of its lock rather than failing:
# `apt-get update` does not honour DPkg::Lock::Timeout, so it is retried.
APT_WAIT_TRIES := 30
system-deps:
	@if [ ! -x /usr/bin/chromium ] || ! command -v nginx >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  echo "system-deps: installing the Debian packages chromium (browser tests) and nginx-light (deploy tests) with apt-get"; \
	  tries=1; until $$SUDO apt-get update -qq; do \
	    [ $$tries -lt $(APT_WAIT_TRIES) ] || { echo "system-deps: apt-get update kept failing for 5 minutes; giving up"; exit 1; }; \
	    echo "system-deps: apt-get update failed (is another apt running?); retry $$tries/$(APT_WAIT_TRIES) in 10 s"; \
	    tries=$$((tries + 1)); sleep 10; \
	  done; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium nginx-light >/dev/null; \
	fi

migrate: install
	mkdir -p $(TAILBOARD_DATA_DIR)
	$(VENV)/bin/alembic upgrade head

demo: migrate
	$(VENV)/bin/flask --app app demo

serve:
	GUNICORN_BIND=$(HOST):$(PORT) WEB_CONCURRENCY=$${WEB_CONCURRENCY:-2} $(VENV)/bin/gunicorn -c deploy/gunicorn.conf.py app:app

run: demo
	@echo "Tailboard is serving the demo on http://$(HOST):$(PORT)/ (organizer login: organizer@demo.example.org / demo-password)"
	$(MAKE) --no-print-directory serve

# -rs: say why each skipped test was skipped (a missing server, ../shared/datasets absent, ...).
test: install-test
	$(PY) -m pytest -q -rs -n 2 --dist loadgroup $(PYTEST_ARGS)

# ruff, mypy on leaderboard/, the import contracts (pyproject.toml) and the architecture doc; part of `make test` too.
lint: install-test
	$(PY) -m pytest -q tests/test_code_checks.py

bench: install-test
	$(PY) bench/score_bench.py

clean:
	rm -rf $(VENV) instance .pytest_cache screenshots
