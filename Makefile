# The two commands of the README:
#   make run    install what is needed, then measure NGINX on the local default inventory
#   make test   install what is needed, then run the linters and the whole test suite
.PHONY: setup setup-dev run test lint lint-checks unit integration

setup:
	scripts/setup

setup-dev:
	scripts/setup --dev

# SIZING_RUN_ARGS: more options for `make run`, e.g. SIZING_RUN_ARGS="--repeat 2 --duration 2"
# for a quick look (the README test uses it to keep CI short); empty by default.
SIZING_RUN_ARGS ?=

run: setup
	.venv/bin/sizing run --cores 1,2,4,8 $(SIZING_RUN_ARGS)

lint: setup-dev lint-checks

# The linters alone (the set-up done): `make test` runs them after starting the libvirt tests.
# mypy's cache lives beside oha's and the guest image's, outside the checkout: a new clone
# re-checks only the files whose content differs (mypy compares hashes when mtimes differ).
MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sizing/mypy
lint-checks:
	.venv/bin/ruff check sizing tests benchmarks/* playbooks/files playbooks/callback_plugins examples
	.venv/bin/ruff format --check sizing tests benchmarks/* playbooks/files playbooks/callback_plugins examples
	MYPY_CACHE_DIR="$(MYPY_CACHE_DIR)" .venv/bin/mypy
	.venv/bin/ansible-lint playbooks/
	.venv/bin/lint-imports

unit: setup-dev
	.venv/bin/pytest tests/unit -q -n 2

integration: setup-dev
	.venv/bin/pytest tests/integration -q -m "integration and noload" -n 2 --dist loadfile
	scripts/bg wait oha guest-image container-image go-tools
	.venv/bin/pytest tests/integration -q -m "integration and not noload"

# The linters, the unit tests and the integration tests marked noload (they drive no load and
# read no CPU figure) run while oha compiles and the guest image is found or built
# (scripts/setup --dev starts them with scripts/bg), on both CPUs: the linters as one more
# background job, the tests in one pytest-xdist session (a module's tests stay in one worker,
# which keeps its fixtures). Beside them, in the background: the libvirt tests (marked
# emulated: a TCG guest's figures, no speed asserted; scripts/test-emulated, as soon as the
# guest image is there) and the tests marked robust (kills, interrupts, locks, resumes,
# secrets: load, but no figure asserted, on their own run lock; scripts/test-robust). The
# integration tests that assert a figure start after everything else has ended, one at a
# time, on a machine nothing else uses.
test: setup-dev
	.venv/bin/sizing doctor --dev
	scripts/bg start emulated scripts/test-emulated
	scripts/bg start robust scripts/test-robust
	scripts/bg start lint $(MAKE) --no-print-directory lint-checks
	.venv/bin/pytest tests/unit tests/integration -q -m "not integration or (noload and not emulated)" \
		-n 2 --dist loadfile --durations=15; rc=$$?; scripts/bg wait lint && exit $$rc
	scripts/bg wait guest-image emulated oha container-image go-tools robust
	.venv/bin/pytest tests/integration -q -m "not noload and not emulated and not robust" --durations=25
