# Python binding (bindings/python): venv, package data, tests, benchmarks.
# Included by the root Makefile, which defines PYTHON312, WASM and the wasm target.

PY_DIR      := bindings/python
PY_PKG_WASM := $(PY_DIR)/src/polyloop_assembly/assembly.wasm
PY_VENV     ?= .venv
PY_VENV_PY  := $(abspath $(PY_VENV))/bin/python
PY_STAMP    := $(PY_VENV)/.polyloop-assembly-python.stamp
PY_PIP      := $(PY_VENV_PY) -m pip --disable-pip-version-check -q

.PHONY: python.venv python.wasm test.python bench.python

# `make test` includes the Python binding; `make bench` runs its bench through internal/benchreport.
test: test.python

# The module shipped as package data (git-ignored, built from source).
python.wasm: $(PY_PKG_WASM)
$(PY_PKG_WASM): $(WASM)
	cp $(WASM) $@

# .venv at the repo root with CPython 3.12, the pinned dependencies and the
# package installed editable.
python.venv: $(PY_STAMP)
$(PY_STAMP): $(PY_DIR)/constraints.txt $(PY_DIR)/pyproject.toml | check-python312
	@if [ ! -x $(PY_VENV_PY) ] || ! $(PY_VENV_PY) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then \
		echo "creating $(PY_VENV) with $(PYTHON312)"; rm -rf $(PY_VENV); $(PYTHON312) -m venv $(PY_VENV); fi
	$(PY_PIP) install -c $(PY_DIR)/constraints.txt setuptools wasmtime msgpack pytest hypothesis
	$(PY_PIP) install -c $(PY_DIR)/constraints.txt --no-build-isolation --no-deps -e $(PY_DIR)
	@touch $@

test.python: python.venv python.wasm
	cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q

bench.python: python.venv python.wasm
	$(PY_VENV_PY) $(PY_DIR)/bench/bench.py

# Data sets (issue 13): assemble_many, the CLI's --batch, Ray Data (a local
# cluster of 2 CPUs) and datasets.map(num_proc=2) on the same 10,000 requests.
# Their packages (ray[data], datasets, tqdm: ~300 MB) go into the same venv,
# pinned in constraints.txt.
PY_DATA_STAMP := $(PY_VENV)/.polyloop-assembly-data.stamp

.PHONY: python.data-deps test.data
test: test.data

python.data-deps: $(PY_DATA_STAMP)
$(PY_DATA_STAMP): $(PY_STAMP) $(PY_DIR)/constraints.txt
	$(PY_PIP) install -c $(PY_DIR)/constraints.txt "ray[data]" datasets tqdm
	@touch $@

test.data: python.data-deps python.wasm
	@HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0 $(SUITE) python.data -- \
		bash -c 'cd $(PY_DIR) && $(PY_VENV_PY) -m pytest -q -p no:cacheprovider tests_data'
