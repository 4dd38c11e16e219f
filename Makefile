# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# bubblewrap: the default sandbox; python3-minimal: the sandbox's interpreter; g++: C++17 judging;
# docker.io: the docker sandbox backend (its tests start their own daemon); chromium + fonts:
# kaleido's PNG/SVG/PDF export and the Playwright tests (never a downloaded browser).
DEB_PACKAGES := bubblewrap python3-minimal g++ docker.io chromium fonts-liberation
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(REQ_HASH)
PORT ?= 8501
HOST ?= 127.0.0.1

.PHONY: lab lab-smoke run test test-fast test-v2 test-v2-ci v2vm-debs stress setup debs db lint clean-venv sandbox-image bench gpu-env gpu-env-check screenshots paper-figures

# `make run HOST=0.0.0.0` opens the dashboard to the network, behind a token (docs/dashboard.md).
run: setup db
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) scripts/run_dashboard.sh

# Every test, every marker (what CI runs), in two phases: the process-safe tests on pytest-xdist
# workers, one per core (worksteal: each worker runs long stretches of the suite in file order, so
# a module's fixture is rarely built twice; what a run builds once for every worker is
# tests/conftest.py:built_once), then the tests that need the machine to themselves, in one
# process (SERIAL: the docker daemon, the stress suite's CPU hogs, wall-clock budgets; the marker
# `serial` in pyproject.toml). tests/phases.py then checks that the two phases ran every collected
# test exactly once. Each phase runs whatever the other's result; make fails if any of the three did.
SERIAL := serial or docker or stress
WORKERS ?= auto
test: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	log=$$(mktemp -d); \
	$(PY) -m pytest -p tests.phases --phase-log $$log/parallel -m "not ($(SERIAL))" -n $(WORKERS) --dist worksteal --durations=15; \
	parallel=$$?; \
	$(PY) -m pytest -p tests.phases --phase-log $$log/serial -m "$(SERIAL)" --durations=15; \
	serial=$$?; \
	$(PY) -m tests.phases $$log; split=$$?; rm -rf $$log; \
	exit $$(( parallel || serial || split ))

# The quick tier while working: everything but the slow, browser and docker tests (markers in
# pyproject.toml; a marker added there, such as stress, joins this list by hand: pytest refuses
# an unregistered name here), one pytest-xdist worker per core.
FAST := not slow and not browser and not docker and not stress and not serial
test-fast: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -m "$(FAST)" -n auto --dist worksteal

# The verdict table under CPU hogs and memory churn, 20 times (`make test` runs it 3 times).
STRESS_REPEATS ?= 20
stress: setup
	FLAB_STRESS_REPEATS=$(STRESS_REPEATS) $(PY) -m pytest -m stress -q -rA tests/stress

# The docs' screenshots (docs/screenshots/), from the committed lab in Chromium; `make test` never writes them.
screenshots: setup
	FLAB_SCREENSHOTS=docs/screenshots $(PY) -m pytest -q tests/pages/test_browser.py tests/pages/test_research_views.py \
		-k "miniature_lab or reaches_done or two_experiments_overlaid"

# The docs' paper-mode figures (docs/screenshots/paper-*.pdf/png): the lab's Frontier and pass@k, 3.3 in wide.
paper-figures: setup
	PYTHONPATH=$(CURDIR) $(PY) scripts/paper_figures.py

# The sandbox suites on a real cgroup v2 kernel (scripts/v2vm.sh: QEMU, the host's / read-only),
# with the judge started in a leaf cgroup as systemd starts a service. V2_KERNEL=6.1 (bookworm) or
# 6.12 (bookworm-backports): the two ways of reading a test's memory peak (docs/sandbox.md). Its
# packages are installed by these targets only; the kernel is unpacked into a cache folder. The
# docker tests start dockerd in the guest and build the sandbox image on its empty data-root.
V2VM_PACKAGES := qemu-system-x86 busybox-static xz-utils zstd
V2_KERNEL ?= 6.1
V2_PYTEST := $(PY) -m pytest -q --color=no -p no:cacheprovider
# CI's share (.ci/run): accounting, conformance, the hot path, the hostile memory cases and the v2
# tests, less what repeats a path under emulation (the CPU-hog twins, most C++ compiles) and the
# docker backend (`make test-v2` runs it; its time is in docs/sandbox.md).
V2_CI_TESTS := tests/sandbox/test_cgroup_v2.py tests/sandbox/test_accounting.py tests/sandbox/test_conformance.py \
	tests/sandbox/test_hot_path.py "tests/sandbox/test_hostile.py::test_hostile_program[bwrap-memory_bomb_py]" \
	"tests/sandbox/test_hostile.py::test_hostile_program[bwrap-mmap_bomb_py]"
V2_CI_SKIP := -k "not cpu_hog and not std_thread and not special_judge" \
	$(foreach v,AC WA TLE RE CE OLE,--deselect "tests/sandbox/test_conformance.py::test_one_program_per_verdict[bwrap-$(v)-cpp]")
test-v2: setup v2vm-debs
	scripts/v2vm.sh --kernel $(V2_KERNEL) --leaf $(V2_PYTEST) tests/sandbox

test-v2-ci: setup v2vm-debs
	scripts/v2vm.sh --kernel $(V2_KERNEL) --leaf $(V2_PYTEST) -m "not docker and not slow" $(V2_CI_SKIP) $(V2_CI_TESTS)

v2vm-debs:
	@scripts/ensure_debs.sh $(V2VM_PACKAGES)

setup: debs $(STAMP)

debs:
	@scripts/ensure_debs.sh $(DEB_PACKAGES)

# The stamp is keyed on the hash of requirements.txt and pyproject.toml: nothing is reinstalled when
# they are unchanged. requirements.txt's exact pins first, then this clone itself, editable and
# without resolving again (pyproject.toml declares the same pins): it adds the `frontier-lab` command.
$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "frontier-lab needs Python 3.11+; set PYTHON=python3.11")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	rm -f $(VENV)/.installed-*
	touch $@

# The database with real content: the builtin problems and the committed miniature lab.
db: setup
	$(PY) -m backend db init
	$(PY) -m backend problems build-builtin
	$(PY) -m backend lab import

# The miniature lab from scratch (about an hour on 2 cores); `make lab-smoke` is the CI-sized recipe.
lab: setup
	$(PY) -m backend lab build

lab-smoke: setup
	$(PY) -m backend lab build --smoke

# The docker backend's image, built offline from this machine's own Debian files.
sandbox-image: setup
	scripts/start_dockerd.sh
	scripts/build_sandbox_image.sh

bench: setup
	$(PY) bench/judge_overhead.py
	$(PY) bench/judge_overhead.py --language cpp
	$(PY) bench/judge_speed.py

lint: setup
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

clean-venv:
	rm -rf $(VENV)

# The GPU environment (vLLM, CUDA torch) as its own venv, on a CUDA machine; never part of `make test`.
GPU_VENV := .venv-gpu
# PyPI's torch 2.13.0 is a CUDA 13.0 build (it requires cuda-toolkit 13.0.3), which needs an NVIDIA
# driver >= 580; check that first, in one line (SKIP_DRIVER_CHECK=1 builds anyway, e.g. on a login node).
GPU_DRIVER_MIN = 580
gpu-env:
	@[ -n "$(SKIP_DRIVER_CHECK)" ] || { v=$$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1); \
	  if [ -z "$$v" ]; then echo "make gpu-env: no NVIDIA driver found (nvidia-smi); torch 2.13.0 (CUDA 13.0) needs driver >= $(GPU_DRIVER_MIN) (SKIP_DRIVER_CHECK=1 to build anyway)"; exit 2; \
	  elif [ "$${v%%.*}" -lt $(GPU_DRIVER_MIN) ]; then echo "make gpu-env: NVIDIA driver $$v is older than $(GPU_DRIVER_MIN), which torch 2.13.0 (CUDA 13.0) needs; update the driver"; exit 2; fi; }
	test -x $(GPU_VENV)/bin/python || $(PYTHON) -m venv $(GPU_VENV)
	$(GPU_VENV)/bin/python -m pip install -q --upgrade pip
	$(GPU_VENV)/bin/python -m pip install -r requirements-gpu.txt

# Resolve requirements-gpu.txt with pip's resolver, installing nothing (works on any machine).
gpu-env-check: setup
	$(PY) -m pip install --dry-run --ignore-installed --quiet --report gpu-env-report.json -r requirements-gpu.txt
	$(PY) scripts/gpu_env_report.py gpu-env-report.json
