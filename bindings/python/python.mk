# Python binding (bindings/python): venv, package data, dist, tests, benchmarks.
# Included by the root Makefile, which defines PYTHON312, WASM and the wasm target.

PY_DIR      := bindings/python
PY_PKG_DIR  := $(PY_DIR)/src/polyloop_assembly
PY_PKG_WASM := $(PY_PKG_DIR)/assembly.wasm
# Staged beside the sources (git-ignored): the module, the version, the licence.
PY_STAGED   := $(PY_PKG_WASM) $(PY_PKG_DIR)/VERSION $(PY_DIR)/LICENSE
PY_VENV     ?= .venv
PY_VENV_PY  := $(abspath $(PY_VENV))/bin/python
PY_STAMP    := $(PY_VENV)/.polyloop-assembly-python.stamp
PY_PIP      := $(PY_VENV_PY) -m pip --disable-pip-version-check -q
# The venv's packages are installed without byte-compiling them (pip compiles
# every file of ray, pyarrow, pandas...: about half of the install's CPU time);
# Python writes the .pyc of what it imports when it first imports it.
PY_INSTALL  := $(PY_PIP) install --no-compile -c $(PY_DIR)/constraints.txt
PY_DIST_DIR ?= dist
# The CPythons the built wheel is tested on by test.python.dist (those present).
PY_DIST_PYTHONS ?= $(wildcard $(HOME)/.pyenv/versions/3.9.*/bin/python3 $(HOME)/.pyenv/versions/3.1[0-9].*/bin/python3) $(wildcard /usr/bin/python3)

.PHONY: dist python.venv python.venv.run python.wasm dist.python test.python test.python.dist bench.python fmt.python lint.python

# `make test` runs the binding's suite and the built wheel on every CPython here;
# `make dist` writes the wheel and the sdist; `make bench` runs its bench
# through tools/benchreport.
test.all: test.python test.python.dist
dist: dist.python

# The package data (git-ignored, built from source).
python.wasm: $(PY_STAGED)
$(PY_PKG_WASM): $(WASM)
	@cp $(WASM) $@
$(PY_PKG_DIR)/VERSION: VERSION
	@cp VERSION $@
$(PY_DIR)/LICENSE: LICENSE
	@cp LICENSE $@

# .venv at the repo root with CPython 3.12, the pinned dependencies (ruff
# for make fmt and make check, the providers' clients for the tests) and the
# package installed editable; the log in artifacts/test/python.venv.log.
python.venv: $(PY_STAMP)
$(PY_STAMP): $(PY_DIR)/constraints.txt $(PY_DIR)/pyproject.toml $(PY_DIR)/setup.py | check-python312 $(PY_STAGED)
	@$(SETUP) python.venv -- $(MAKE) --no-print-directory python.venv.run
	@touch $@
python.venv.run:
	@if [ ! -x $(PY_VENV_PY) ] || ! $(PY_VENV_PY) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then \
		echo "creating $(PY_VENV) with $(PYTHON312)"; rm -rf $(PY_VENV); $(PYTHON312) -m venv $(PY_VENV); fi
	$(PY_INSTALL) setuptools wasmtime msgpack pytest hypothesis mypy build ruff anthropic openai botocore google-genai
	$(PY_INSTALL) --no-build-isolation --no-deps -e $(PY_DIR)

# ruff (pinned in constraints.txt, configured in pyproject.toml) on the
# binding and on the reference of the vectors (testdata/gen).
PY_RUFF      = $(abspath $(PY_VENV))/bin/ruff
PY_RUFF_ARGS = --config $(PY_DIR)/pyproject.toml $(PY_DIR) testdata/gen scripts
fmt: fmt.python
lint: lint.python
fmt.python: python.venv
	$(PY_RUFF) format $(PY_RUFF_ARGS)
lint.python: python.venv
	$(PY_RUFF) check $(PY_RUFF_ARGS)

# The bounded-resources family at full size (make test.limits; docs/SPEC.md §4 and §6).
test.limits: test.limits.python
.PHONY: test.limits.python
test.limits.python: python.venv python.wasm
	@POLYLOOP_LIMITS=full $(SUITE) limits.python -- bash -c 'cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q -s tests/test_limits.py tests/test_deep_json.py'

# After the data sets' packages (python.data-deps): tqdm, numpy and pyarrow,
# which tests/test_batch.py and tests/test_data_rows.py need, come with them.
test.python: python.venv python.wasm python.data-deps cli
	@$(CLI_PURE_ENV) $(SUITE) python -- bash -c 'cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q --durations=15'

# dist/: a py3-none-any wheel and an sdist, both with the module. The wheel is
# built from the sdist (python -m build), which proves the sdist builds
# without Go; nothing is written into the source tree but the egg-info.
# Both are then re-packed by scripts/normalize_dist.py (sorted entries, every
# time SOURCE_DATE_EPOCH: the commit's time, owners 0, fixed modes), so two
# builds of one commit are byte-identical (make test.dist.reproducible).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
dist.python: python.venv python.wasm
	@mkdir -p $(PY_DIST_DIR)
	@rm -f $(PY_DIST_DIR)/polyloop_assembly-*
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(SETUP) dist.python -- bash -c '$(PY_VENV_PY) -m build --no-isolation --outdir $(PY_DIST_DIR) $(PY_DIR) && \
		$(PY_VENV_PY) scripts/normalize_dist.py --epoch $(SOURCE_DATE_EPOCH) $(PY_DIST_DIR)/polyloop_assembly-*'

# The built wheel installed (not the source tree) into a fresh venv per
# CPython, then the shared vectors and the package checks run through it: all
# of them on the oldest CPython, the smoke set of tests/dist_smoke.py (what can
# differ between interpreters) on the others.
test.python.dist: dist.python cli
	@$(CLI_PURE_ENV) $(SUITE) python-dist -- $(PY_VENV_PY) $(PY_DIR)/tests/dist_check.py --dist $(PY_DIST_DIR) --artifacts artifacts/python-dist $(PY_DIST_PYTHONS)

bench.python: python.venv python.wasm
	$(PY_VENV_PY) $(PY_DIR)/bench/bench.py

# Data sets (make test.data, part of make test: ~75 s here): serial,
# assemble_many, the CLI's --batch, Ray Data (a local cluster of 2 CPUs) and
# datasets.map(num_proc=2) on the same 10,000 requests, as JSON-text rows and
# as request columns (read_json, load_dataset("json")): every row
# byte-identical, the Parquet directories of one schema, input order kept.
# It includes the two-node cluster (tests_data/test_cluster.py, ~20 s): a head
# and a second node, each with the wheel (make dist) installed as a cluster
# installs it; make test.data.cluster runs that test alone.
# Their packages (ray[data], datasets, tqdm: ~300 MB) go into the same venv,
# pinned in constraints.txt.
PY_DATA_STAMP := $(PY_VENV)/.polyloop-assembly-data.stamp
PY_DATA_ENV   := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0

.PHONY: python.data-deps test.data test.data.cluster bench.data
test.all: test.data

python.data-deps: $(PY_DATA_STAMP)
$(PY_DATA_STAMP): $(PY_STAMP) $(PY_DIR)/constraints.txt
	@$(SETUP) python.data-deps -- $(PY_INSTALL) "ray[data]" datasets tqdm
	@touch $@

test.data: python.data-deps python.wasm dist.python cli
	@$(PY_DATA_ENV) $(CLI_PURE_ENV) POLYLOOP_RAY_CLUSTER=1 $(SUITE) python.data -- \
		bash -c 'cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q -p no:cacheprovider --durations=15 tests_data'

test.data.cluster: python.data-deps dist.python
	@$(PY_DATA_ENV) POLYLOOP_RAY_CLUSTER=1 $(SUITE) python.data-cluster -- \
		bash -c 'cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q -p no:cacheprovider tests_data/test_cluster.py'

# The data-set ways side by side, each beside an identity pipeline
# (BENCHMARKS-notes.md, "Data sets"). make bench measures them at 40,000
# rows with their goals (data_bench.py --json, tools/benchreport/datasets.go).
bench.data: python.data-deps python.wasm
	$(PY_DATA_ENV) $(PY_VENV_PY) $(PY_DIR)/bench/data_bench.py 10000 40000
