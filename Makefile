# Two commands on a fresh machine (`make help` lists every target):
#   make preview   offline preview of the dev stack (creates ./venv and installs the runtime requirements first)
#   make test      the whole test suite (live backend tests included: needs root for apt-get and unshare)
#   make destroy STACK=NAME   `pulumi destroy` of a stack, refused while another stack reads its KV store
# `venv` is the virtualenv Pulumi.yaml names, so `pulumi up` and these commands share it.

VENV ?= venv
PYTHON := $(VENV)/bin/python
STACK ?= dev
# pytest-xdist workers for `make test` (tests/conftest.py keeps a module, and all e2e or all live tests, on one worker).
TEST_WORKERS ?= 2
OUT ?= out
# The program's (what `pulumi up` installs), the policy pack's and the offline tooling's; pyproject.toml reads them too.
RUNTIME_REQUIREMENTS := requirements.txt kvpool/policies/requirements.txt kvpool/cli/requirements.txt
# Every version resolved together, so that pip installs at once instead of searching (bench/results/first-install.md).
CONSTRAINTS := constraints.txt

.PHONY: help preview test destroy

help:  ## list these targets
	@awk -F':.*## ' '/^[a-z][a-z-]*:.*## / {printf "make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.installed-runtime: $(RUNTIME_REQUIREMENTS) $(CONSTRAINTS)
	@echo "Creating $(VENV) and installing $(RUNTIME_REQUIREMENTS) (once; about a minute)"
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --disable-pip-version-check --progress-bar on -c $(CONSTRAINTS) $(addprefix -r ,$(RUNTIME_REQUIREMENTS))
	touch $@

$(VENV)/.installed: $(VENV)/.installed-runtime requirements-dev.txt
	@echo "Installing the test tools of requirements-dev.txt into $(VENV) (once)"
	$(PYTHON) -m pip install --disable-pip-version-check --progress-bar on -c $(CONSTRAINTS) -r requirements-dev.txt
	touch $@

preview: $(VENV)/.installed-runtime  ## offline preview of STACK (default dev): prints the plan, writes out/<stack>/
	$(PYTHON) -m kvpool preview --stack $(STACK) --out $(OUT)

test: $(VENV)/.installed  ## the whole test suite (needs root, Go and the one-time engine build; see README)
	bash tests/live/install_backends.sh
	bash tests/live/build_kv_conductor.sh >/dev/null || [ $$? -eq 2 ]  # 2: no cargo; its live test skips (fails under CI)
	bash tools/real-engine/build.sh
	bash tools/workflow-lint/build.sh >/dev/null
	$(PYTHON) -m pytest -n $(TEST_WORKERS)

# The destroy guard: an owner's program cannot see who reads its store (a StackReference points one way), so the
# fleet, which reads every stack file, checks before the CLI destroys anything.
destroy:
	$(PYTHON) -m kvpool fleet --check-destroy --stack $(STACK)
	pulumi destroy --stack $(STACK)
