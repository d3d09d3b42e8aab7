# Two commands on a fresh machine:
#   make preview   offline preview of the dev stack (creates ./venv and installs on first use)
#   make test      the whole test suite (live backend tests included: needs root for apt-get and unshare)
# `venv` is the virtualenv Pulumi.yaml names, so `pulumi up` and these commands share it.

VENV ?= venv
PYTHON := $(VENV)/bin/python
STACK ?= dev
OUT ?= out

.PHONY: preview test

$(VENV)/.installed: requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

preview: $(VENV)/.installed
	$(PYTHON) -m kvpool preview --stack $(STACK) --out $(OUT)

test: $(VENV)/.installed
	bash tests/live/install_backends.sh
	bash tests/live/build_kv_conductor.sh >/dev/null || [ $$? -eq 2 ]  # 2: no cargo; its live test skips (fails under CI)
	bash tools/real-engine/build.sh
	bash tools/workflow-lint/build.sh >/dev/null
	$(PYTHON) -m pytest
