# Two entry points for a new machine: `make run` and `make test`.
# Both install what is missing (Debian packages, a virtualenv) and are idempotent.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.fslab-installed
TEST_STAMP := $(VENV)/.fslab-test-installed

# pytest rewrites each test module's asserts and caches the result beside it, unless
# PYTHONDONTWRITEBYTECODE is set (it is on this machine kind): then every worker rewrites
# all 149 modules again, 4.3 s a process here (9.7 s against 5.5 s to collect the suite).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

.PHONY: run test check durations check-orders lint deps system-deps system-deps-test venv venv-test clean

# fslab callable by name: as root, /usr/local/bin/fslab links to this checkout's program
# (never over a file that is not such a link); otherwise the exact line to type is printed.
LINK := /usr/local/bin/fslab

run: deps
	@if [ "$$(id -u)" = 0 ] && [ -d $(dir $(LINK)) ] && { [ ! -e $(LINK) ] || [ -L $(LINK) ]; }; \
	then ln -sfn "$(CURDIR)/$(BIN)/fslab" $(LINK) && echo "fslab: $(LINK) -> $(CURDIR)/$(BIN)/fslab"; \
	else echo "fslab: the program is $(CURDIR)/$(BIN)/fslab; to call it as fslab: export PATH=\"$(CURDIR)/$(BIN):\$$PATH\""; fi
	$(BIN)/fslab run

# The whole suite: every test on four workers (most of a test is waiting for fio, mkfs and
# the disk: four overlap on two cores, 6 min 11 s against 6 min 36 s with three here; five
# are no faster), dealt to the workers by expected time, longest first, the tests that
# share zfs-fuse to one worker, and idle workers taking work from busy ones (worksteal:
# 5 min 25 s against 6 min 14 s); then the tests that measure the machine itself, alone
# (tests/conftest.py decides which). mypy checks the types beside the main tier (14 s on
# a fresh clone): its output comes after the tier's, and either failing fails the target.
MAIN_TIER := -q -n 4 --dist worksteal -m "not quiet"

test: system-deps-test venv-test
	$(BIN)/ruff check src tests benchmarks
	@$(BIN)/mypy src/fslab > $(VENV)/mypy.out 2>&1 & types=$$!; \
	trap 'kill $$types 2>/dev/null; exit 130' INT TERM; \
	echo '$(PYTEST) $(MAIN_TIER)  (and $(BIN)/mypy src/fslab beside it)'; \
	$(PYTEST) $(MAIN_TIER); tests=$$?; \
	wait $$types; typed=$$?; cat $(VENV)/mypy.out; \
	[ $$typed -eq 0 ] || echo "mypy src/fslab failed" >&2; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]
	$(PYTEST) -q -m quiet

# The edit-test loop: lint, types, and every test that needs nothing of the machine
# (no root, mkfs, loop device, fio or process of its own; tests/conftest.py decides),
# the fuzzers at a tenth of their examples (make test: a fifth; tests/parsers/test_fuzz.py).
check: venv-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src/fslab
	FSLAB_FUZZ=loop $(PYTEST) -q -n 2 --dist worksteal -m check

# The record of what each test of the check tier and of the simulations takes
# (tests/durations.txt; tests/durations.py): each tier in a process of its own (the check
# tier's figures are then those of make check's workers, not of a process the simulations
# filled first), CPU and wall seconds of each test's setup, call and teardown, sorted and
# rounded. tests/test_durations.py holds the check tier to its budget and fails while a
# check-tier test is missing from the record: run this after adding or merging tests, on
# a quiet machine when the figures are to be compared (3-4 minutes). make test deals its
# workers' shares by it.
durations: venv-test
	FSLAB_FUZZ=loop $(PYTEST) -q -n 0 -m check --record-durations=tests/durations.txt
	$(PYTEST) -q -n 0 -m simulation --record-durations=tests/durations.txt

# The check tier twice more, in other orders and under other hash seeds: a test that
# passes only after another, or only in one set order, fails in one of them (a few
# minutes: not part of the loop; before a merge that adds many tests).
check-orders: venv-test
	PYTHONHASHSEED=1 FSLAB_TEST_ORDER=reverse FSLAB_FUZZ=loop $(PYTEST) -q -n 2 -m check -p no:cacheprovider
	@order=shuffle:$$(date +%s); echo "PYTHONHASHSEED=2 FSLAB_TEST_ORDER=$$order"; \
	PYTHONHASHSEED=2 FSLAB_TEST_ORDER=$$order FSLAB_FUZZ=loop $(PYTEST) -q -n 2 -m check -p no:cacheprovider

lint: system-deps venv-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src/fslab

deps: system-deps venv

system-deps:
	@scripts/install-system-deps

system-deps-test:
	@scripts/install-system-deps --test

venv: $(STAMP)

venv-test: $(TEST_STAMP)

# What fslab runs on, its libraries compiled ahead on every core, their own test folders
# left out (pip compiles one file after another, tests included: 51 s against 27 s here).
# Compiled they must be: where PYTHONDONTWRITEBYTECODE is set (it is on this machine
# kind), Python never caches what it compiles, and every fslab process would compile
# pandas, scipy and statsmodels again (9.5 s against 2.9 s to import them here).
# The tools of the tests come on top.
COMPILE := $(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib src > /dev/null || true

define NEW_VENV
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
		echo "fslab: '$(PYTHON) -m venv' failed; install python3-venv" >&2; exit 1; }
endef

# uv installs what pip would, downloading in parallel: 3 s to fetch uv and 8 s to install
# against 3 s to upgrade pip and 25 s to install with it (a fresh clone here, 2026-11-27).
# uv trusts the system's certificates as pip does here and takes pip's index from the
# environment; where uv still cannot install, pip does (an error of the project's own then
# shows twice, once from each).
define INSTALL
	{ $(BIN)/python -m pip install -q uv && $(BIN)/uv pip install -q --native-tls \
		$${PIP_INDEX_URL:+--index-url "$$PIP_INDEX_URL"} --python $(BIN)/python -e '$(1)'; } \
		|| $(BIN)/python -m pip install -q --no-compile -e '$(1)'
endef

$(STAMP): pyproject.toml
	$(NEW_VENV)
	$(call INSTALL,.)
	$(COMPILE)
	@touch $(STAMP)

# fslab and the tests' tools in one install and one compile (two of each cost 10-20 s more)
$(TEST_STAMP): pyproject.toml
	$(NEW_VENV)
	$(call INSTALL,.[test])
	$(COMPILE)
	@touch $(STAMP) $(TEST_STAMP)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache
