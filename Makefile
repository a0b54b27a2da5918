# polyloop-assembly — build, test, demo and benchmarks.
# The two commands of the README: `make demo` and `make test`.

SHELL := /bin/bash
GO ?= go
export CGO_ENABLED ?= 1

# CPython 3.12 is the oracle of the template engine and the reference of the
# vectors (Unicode 15.0, like Go's tables).
PYTHON312 ?= $(shell p="$$(pyenv root 2>/dev/null)/versions/3.12.1/bin/python3.12"; [ -x "$$p" ] && echo "$$p" || command -v python3.12)

WASM := wasm/assembly.wasm
WASM_SRC := $(shell find core wasm wirejson -name "*.go" -not -name "*_test.go" 2>/dev/null) go.mod go.sum

.PHONY: all wasm demo fmt fmt.go lint lint.go check check.run check.tidy check.generate check.subjects check.prose test test.all test.begin test.suite test.check test.go test.format test.format-full test.host test.limits test.limits.go test.reproducible test.dist.reproducible fuzz bench bench.quick bench.go vectors check-python312 dist

all: wasm

# The one build of the module (make wasm, test.reproducible): add -o FILE ./wasm.
WASM_BUILD = env GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w -buildid="

# Setup steps (builds, installs) keep their commands and output in
# artifacts/test/NAME.log and print nothing unless they fail.
SETUP = scripts/suite --quiet

wasm: $(WASM)
$(WASM): $(WASM_SRC)
	@$(SETUP) build.wasm -- $(WASM_BUILD) -o $@ ./wasm

# The command-line tool, built once for the suites that run it, which find it
# in POLYLOOP_CLI (each builds its own without it): with cgo (every engine)
# for host-test; without (native and wazero: a smaller binary that starts
# faster, 1,000 runs in the preview's differential) for the Python vectors,
# the data sets and the preview.
CLI      := build/bin/polyloop-assemble
CLI_PURE := build/bin/polyloop-assemble-nocgo
CLI_ENV       = POLYLOOP_CLI=$(abspath $(CLI))
CLI_PURE_ENV  = POLYLOOP_CLI=$(abspath $(CLI_PURE))
.PHONY: cli
cli:
	@$(SETUP) build.cli -- bash -c 'CGO_ENABLED=1 $(GO) build -o $(CLI) ./cmd/polyloop-assemble && CGO_ENABLED=0 $(GO) build -o $(CLI_PURE) ./cmd/polyloop-assemble'

# The main job on the bundled example, through the WebAssembly module (wazero).
demo: wasm
	@$(GO) run ./cmd/polyloop-assemble --engine wazero --in json --out text examples/react.json

check-python312:
	@[ -n "$(PYTHON312)" ] && [ -x "$(PYTHON312)" ] || { echo "python3.12 not found: install CPython 3.12 (pyenv install 3.12.1) or set PYTHON312=/path/to/python3.12" >&2; exit 1; }

# Regenerate testdata/vectors, testdata/prompt-vectors and testdata/json-vectors from the pure-Python reference (CPython oracle).
vectors: check-python312
	$(PYTHON312) testdata/gen/gen_vectors.py
	$(PYTHON312) testdata/gen/gen_prompt_vectors.py
	$(PYTHON312) testdata/gen/gen_json_vectors.py
	$(PYTHON312) testdata/gen/gen_export_vectors.py
	$(PYTHON312) testdata/gen/gen_hostile_vectors.py

# One summary line per suite (scripts/suite; whole logs in artifacts/test/),
# then the totals.
SUITE := scripts/suite
# Within make test, go vet has checked every package of these suites whole,
# test files included, with their cgo settings (test.check, before them): their
# go test runs skip their own vet pass (a subset of go vet's analyzers).
GO_TEST_VET ?=
#
# The suites run in three lanes side by side (make -j3; each lane one suite
# at a time): make check first, alone, since go generate and gofmt may
# rewrite files the others read; then the Go, JS and preview suites in one
# lane, the Python ones in another and the data sets' (Ray, datasets: mostly
# waiting on Ray's processes) in the third. One at a time, the 2-core
# machine was half idle (docs/TESTING.md, "How long it takes"). The setup
# steps run in whichever lane reaches them first, once.
test:
	@scripts/suite-totals --reset
	@$(MAKE) --no-print-directory -j3 --output-sync=target TEST_LANES=1 GO_TEST_VET=-vet=off test.all
	@scripts/suite-totals

# Every suite of make test (the Python and JavaScript makefiles add theirs).
test.all: test.suite test.check test.go test.format test.host test.reproducible test.dist.reproducible

# The order within each lane (order-only prerequisites, set only under
# make test: `make test.host` alone runs just that suite).
ifeq ($(TEST_LANES),1)
test.go test.python: | test.check
test.format: | test.go
test.host: | test.format
test.reproducible: | test.host
test.js: | test.reproducible
test.js.dist: | test.js
test.preview: | test.js.dist
test.python.dist: | test.python
test.dist.reproducible: | test.python.dist
test.data: | test.check
endif

test.begin:
	@scripts/suite-totals --reset

# scripts/suite's own counting on hand-written logs (scripts/suite-counts-test).
test.suite:
	@$(SUITE) suite.counts -- scripts/suite-counts-test

# make check as one suite: formatting, go vet, staticcheck, ruff, eslint,
# go mod tidy and go generate.
test.check:
	@$(SUITE) check -- $(MAKE) --no-print-directory check

# The reference's tests run in .venv (CPython 3.12, made from PYTHON312), which
# has PyPI msgpack for the reference's cross-check.
test.go: check-python312 wasm python.venv
	@$(SUITE) reference -- $(PY_VENV_PY) -m unittest -v testdata/gen/test_reference.py testdata/gen/test_json_vectors.py
	@CGO_ENABLED=0 POLYLOOP_PYTHON312="$(PYTHON312)" $(SUITE) go -- $(GO) test $(GO_TEST_VET) -count=1 -v -skip 'TestFormatDifferential' . ./core/... ./wirejson/ ./internal/... ./cmd/... ./wasm/dispatch ./tools/...

# The CPython differential of the template engine; make test runs a reduced set.
test.format: check-python312
	@CGO_ENABLED=0 POLYLOOP_PYTHON312="$(PYTHON312)" POLYLOOP_FORMAT_CASES=20000 $(SUITE) format-differential -- $(GO) test $(GO_TEST_VET) -count=1 -v -run 'TestFormatDifferential' ./core/

test.format-full: check-python312
	CGO_ENABLED=0 POLYLOOP_PYTHON312="$(PYTHON312)" POLYLOOP_FORMAT_CASES=200000 $(GO) test -count=1 -timeout 30m -run 'TestFormatDifferential' -v ./core/

# native, wazero and wasmtime-go byte for byte: vectors, random requests, fuzz
# seeds, concurrency, traps, a 256 MiB request, the CLI's --batch; and
# wasmtime-go's unchecked calls against Func.Call (wasmhost/wasmtime).
test.host: wasm cli
	@$(CLI_ENV) $(SUITE) host -- $(GO) test $(GO_TEST_VET) -count=1 -timeout 20m -v ./host-test/ ./wasmhost/...

# The bounded-resources family (docs/SPEC.md §4 and §6, RATIONALE.md "Bounded resources")
# at full size: 300 MiB bad values, a 1 GiB - 64 byte template,
# 100,000 fields x 10,000 steps, a 629 MB response, the prompt at the 1.5 GiB
# limit; every engine, one process at a time, with time and memory budgets
# (about 15 minutes with the Python and Node parts; up to 6 GB of RAM).
# `make test` runs the same family at 1 MiB without the time budget.
test.limits: test.limits.go
test.limits.go: wasm cli
	@CGO_ENABLED=0 POLYLOOP_LIMITS=full $(SUITE) limits.core -- $(GO) test -count=1 -timeout 60m -v -run 'Limit|TooLarge|Saturates|ErrorsAreSmall|ParseMemory|EncodedSize' ./core/
	@$(CLI_ENV) POLYLOOP_LIMITS=full $(SUITE) limits.host -- $(GO) test -count=1 -timeout 180m -v -run 'TestLimits' ./host-test/

# Two builds of the module give the same bytes: one as make wasm builds it
# (from the build cache, which make wasm has filled) and one from scratch (-a:
# every package, the standard library's included, compiled again).
test.reproducible:
	@$(SUITE) reproducible -- bash -c 'd=$$(mktemp -d); trap "rm -rf $$d" EXIT; \
	$(WASM_BUILD) -o $$d/cached.wasm ./wasm && $(WASM_BUILD) -a -o $$d/rebuilt.wasm ./wasm || exit 1; \
	if cmp -s $$d/cached.wasm $$d/rebuilt.wasm; then echo "two builds of the module are identical ($$(wc -c < $$d/rebuilt.wasm) bytes, sha256 $$(sha256sum $$d/rebuilt.wasm | cut -c1-16)…)"; \
	else echo "two builds of the module differ (from the build cache and with -a)" >&2; exit 1; fi'

# Two make dist builds of one commit give the same wheel, sdist and npm
# tarball, byte for byte (scripts/dist-reproducible; SHA-256s in its log): the
# ones in dist/, which the package suites install, and one more.
test.dist.reproducible: dist.python dist.js
	@$(SUITE) dist.reproducible -- scripts/dist-reproducible $(PY_DIST_DIR) $(JS_DIST_DIR)

# make lint and make fmt: the Python and JavaScript makefiles add theirs
# (ruff check and eslint; ruff format and prettier).
# go vet and staticcheck (pinned) on the Go code; wasm/ is left out but for
# wasm/dispatch: staticcheck does not read //go:wasmexport and calls the
# module's exports unused.
# staticcheck is built once per version and toolchain into a cache outside the
# tree (scripts/go-tool), not compiled by `go run` whenever the build cache is cold.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: lint.go
lint.go:
	CGO_ENABLED=0 $(GO) vet . ./core/... ./wirejson/ ./internal/... ./wasmhost/ ./wasm/dispatch ./tools/...
	$(GO) vet ./cmd/... ./host-test/ ./wasmhost/...
	sc=$$(GO=$(GO) scripts/go-tool $(STATICCHECK)) && $$sc . ./core/... ./wirejson/ ./internal/... ./wasmhost/... ./cmd/... ./wasm/dispatch ./tools/...

# gofmt (the toolchain's) on every Go file of the work tree, ignored ones aside.
GOFMT = $$($(GO) env GOROOT)/bin/gofmt
fmt: fmt.go
fmt.go:
	$(GOFMT) -l -w $$(git ls-files -co --exclude-standard '*.go' | while read -r f; do [ -e "$$f" ] && echo "$$f"; done)

# make check: the formatters, the linters, go mod tidy, go generate, the
# commit subjects since a23deba (scripts/check-subjects: at most 72) and the
# width of Markdown prose (scripts/check_prose_width.py: at most 120), then
# fails if they changed any file (tracked or new), with the diff's stat. The
# work tree is compared with itself before the run, so uncommitted edits of
# one's own do not fail it; in a clean checkout this is git diff --exit-code.
# make -k: every step runs even when one fails; -j1: in order, one at a time
# (go generate first, so a generated file the formatters would change fails
# the check), also under make test's -j2.
TREE_ID = i=$$(mktemp -u); GIT_INDEX_FILE=$$i git add -A && GIT_INDEX_FILE=$$i git write-tree; r=$$?; rm -f $$i; exit $$r
check:
	@before=$$($(TREE_ID)) || exit 1; \
	$(MAKE) --no-print-directory -j1 -k check.run; rc=$$?; \
	after=$$($(TREE_ID)) || exit 1; \
	if [ "$$before" != "$$after" ]; then \
		echo "make check changed files:"; git diff --stat $$before $$after; \
		echo "check: make fmt, go mod tidy or go generate changed $$(git diff --name-only $$before $$after | wc -l) files: run make fmt, commit"; exit 1; fi; \
	if [ $$rc -eq 0 ]; then echo "check: formatted, vetted and linted; go mod tidy and go generate change nothing"; \
	else echo "check: go vet, staticcheck, ruff check, eslint, check-subjects or check_prose_width found problems (above)"; fi; exit $$rc
check.run: check.generate fmt lint check.tidy check.subjects check.prose
check.tidy:
	$(GO) mod tidy
check.generate:
	$(GO) generate ./...
# Commit subjects since the old style's last commit: at most 72 characters.
check.subjects:
	@scripts/check-subjects
# Markdown prose lines: at most 120 characters (tables, code blocks, link
# definitions and generated files aside; scripts/check_prose_width.py).
check.prose:
	@python3 scripts/check_prose_width.py

# The built wheel, sdist and npm tarball (the Python and JavaScript makefiles
# add their dist.* targets).
dist:
	@ls -l dist/* | awk '{print "dist: " $$NF " (" $$5 " bytes)"}'

FUZZTIME ?= 10m
fuzz:
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz '^FuzzAssembleBytes$$' -fuzztime $(FUZZTIME) -parallel 1 ./core/
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) -parallel 1 ./core/

# One table across every host (native Go, wazero, wasmtime-go, Python, Node)
# on the shared requests of internal/testing/benchreq: BENCHMARKS.md (regenerated),
# BENCHMARKS.json and BENCHMARKS-add_step.svg. The Python and JavaScript
# makefiles add their own table benchmarks (bench.python, bench.js) to it.
# It includes the data-set ways at 40,000 rows (bindings/python/bench/data_bench.py,
# on ray[data] and datasets: make python.data-deps).
# `make bench.quick` is a reduced run (under a minute) written to
# $(BENCH_QUICK_OUT).md/.json, leaving BENCHMARKS.md alone; it leaves out
# datasets and Ray.
BENCH_HOSTS = -python "$(PY_VENV_PY)" -node "$$(command -v node)"
BENCH_QUICK_OUT ?= /tmp/polyloop-bench-quick
bench: wasm python.venv python.data-deps python.wasm js.deps js.wasm dist.js
	$(GO) run ./tools/benchreport $(BENCH_HOSTS) -out BENCHMARKS.md -json BENCHMARKS.json

bench.quick: wasm python.venv python.wasm js.deps js.wasm dist.js
	$(GO) run ./tools/benchreport -quick $(BENCH_HOSTS) -out $(BENCH_QUICK_OUT).md -json $(BENCH_QUICK_OUT).json

# The Go benchmarks of the core and of the engines (go test -bench).
bench.go: wasm
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem -count 1 ./core/
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./host-test/

-include bindings/python/python.mk
-include bindings/js/js.mk
-include preview/preview.mk
