# Tailboard: `make run` serves a demo instance, `make test` runs every test.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
HOST   ?= 127.0.0.1
PORT   ?= 5000
export TAILBOARD_DATA_DIR ?= $(CURDIR)/instance

.PHONY: run test install install-test system-deps serve migrate demo bench clean

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
system-deps:
	@if [ ! -x /usr/bin/chromium ] || ! command -v nginx >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium nginx-light >/dev/null; \
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

test: install-test
	$(PY) -m pytest -q -n 2 --dist loadgroup $(PYTEST_ARGS)

bench: install-test
	$(PY) bench/score_bench.py

clean:
	rm -rf $(VENV) instance .pytest_cache screenshots
