# The prompt preview (preview/): its own npm package on the JavaScript
# binding's public API (@polyloop/assembly, a file: link to bindings/js), with
# its npm dependencies, tests, benchmark and server. Included by the root
# Makefile after bindings/js/js.mk (JS_DIR, CHROMIUM, js.deps, js.wasm).

PV_DIR     := preview
PV_STAMP   := $(PV_DIR)/node_modules/.polyloop-preview.stamp
PV_EXAMPLE := $(PV_DIR)/react.json

.PHONY: preview.deps preview.example test.preview bench.preview preview fmt.preview lint.preview

# `make test` includes the preview's tests; `make bench` its Chromium figures
# (tools/benchreport runs preview/bench/preview.mjs).
test.all: test.preview
bench: preview.deps js.chromium preview.example
fmt: fmt.preview
lint: lint.preview

# node_modules from the committed package-lock.json (npm ci: exact pins); the
# binding is linked, so its own dependencies come from js.deps. The log in
# artifacts/test/preview.deps.log.
preview.deps: js.deps $(PV_STAMP)
$(PV_STAMP): $(PV_DIR)/package.json $(PV_DIR)/package-lock.json
	@$(SETUP) preview.deps -- bash -c 'cd $(PV_DIR) && npm ci --no-audit --no-fund --loglevel=error'
	@touch $@

# The example request the page starts with (copied, never committed).
preview.example:
	@if [ -f examples/react.json ]; then cp examples/react.json $(PV_EXAMPLE); else rm -f $(PV_EXAMPLE); fi

# prettier (.prettierrc.json, .prettierignore) and eslint (eslint.config.js),
# pinned in package.json.
fmt.preview: preview.deps
	cd $(PV_DIR) && node_modules/.bin/prettier --write --list-different "**/*.{js,mjs,cjs,ts,mts,cts,json,css}"
lint.preview: preview.deps
	cd $(PV_DIR) && node_modules/.bin/eslint .

# The preview's tests (preview/test/*.test.mjs: the page, the element in a
# Vite and an esbuild app, the binding's browser build against Node's, and
# axe-core in Chromium; the server in Node). One summary line (scripts/suite;
# the log in artifacts/test/preview.log), screenshots in artifacts/.
test.preview: preview.deps js.wasm js.chromium preview.example cli
	@$(CLI_PURE_ENV) $(SUITE) preview -- bash -c 'cd $(PV_DIR) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 test/*.test.mjs'

# The preview's Chromium benchmark alone (make bench reports it in BENCHMARKS.md).
bench.preview: preview.deps js.wasm js.chromium preview.example
	node $(PV_DIR)/bench/preview.mjs

# Serves the preview on 127.0.0.1 and prints its URL (PORT=… to choose).
preview: preview.deps js.wasm preview.example
	node $(PV_DIR)/serve.mjs $(if $(PORT),--port $(PORT))
