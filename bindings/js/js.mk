# JavaScript binding (bindings/js): npm dependencies, the packaged module, the
# Node and Chromium tests, the prompt preview and the benchmarks.
# Included by the root Makefile, which defines WASM and the wasm target.

JS_DIR      := bindings/js
JS_PKG_WASM := $(JS_DIR)/assembly.wasm
JS_STAMP    := $(JS_DIR)/node_modules/.polyloop-assembly-js.stamp
JS_EXAMPLE  := $(JS_DIR)/preview/react.json
CHROMIUM    ?= /usr/bin/chromium
# apt-get as root, through sudo otherwise.
JS_SUDO     := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: js.deps js.wasm js.chromium js.example test.js test.js.node test.js.browser test.preview preview bench.js bench.preview

# `make test` includes the JavaScript binding and the prompt preview;
# `make bench` runs their benches through internal/benchreport (the preview's
# in Chromium).
test: test.js
test: test.preview
bench: js.chromium js.example

# The binding's own tests; the preview's (test/preview*.test.mjs) run in test.preview.
JS_PREVIEW_TESTS := $(patsubst $(JS_DIR)/%,%,$(wildcard $(JS_DIR)/test/preview*.test.mjs))
JS_TESTS         := $(filter-out $(JS_PREVIEW_TESTS),$(patsubst $(JS_DIR)/%,%,$(wildcard $(JS_DIR)/test/*.test.mjs)))

# node_modules from the committed package-lock.json (npm ci: exact pins).
js.deps: $(JS_STAMP)
$(JS_STAMP): $(JS_DIR)/package.json $(JS_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (with npm)" >&2; exit 1; }
	cd $(JS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The module packaged beside the binding (git-ignored, built from source).
js.wasm: $(JS_PKG_WASM)
$(JS_PKG_WASM): $(WASM)
	cp $(WASM) $@

# Debian's Chromium for the browser test, installed when missing.
js.chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "installing Debian's chromium for the browser test"; \
		$(JS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(JS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@[ -x $(CHROMIUM) ] || { echo "$(CHROMIUM) is missing: apt-get install chromium" >&2; exit 1; }

# The example request the preview starts with (copied, never committed).
js.example:
	@if [ -f examples/react.json ]; then cp examples/react.json $(JS_EXAMPLE); else rm -f $(JS_EXAMPLE); fi

# The Node suite (vectors, properties, bad values, pool, traps) and the
# Chromium test (byte-identical vectors in the page, XSS, template column,
# screenshot to artifacts/). Non-zero on any failure.
test.js: js.deps js.wasm js.chromium js.example
	cd $(JS_DIR) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 $(JS_TESTS)

test.js.node: js.deps js.wasm
	cd $(JS_DIR) && POLYLOOP_SKIP_BROWSER=1 node --test $(JS_TESTS)

test.js.browser: js.deps js.wasm js.chromium js.example
	cd $(JS_DIR) && CHROMIUM=$(CHROMIUM) node --test test/browser.test.mjs

# The prompt preview in Chromium (test/preview*.test.mjs: the page, the
# trajectory viewer, everyday comforts and axe-core, <polyloop-prompt-view> in
# a Vite app). One summary line (scripts/suite; the log in
# artifacts/test/preview.log), screenshots in artifacts/.
test.preview: js.deps js.wasm js.chromium js.example
	@$(SUITE) preview -- bash -c 'cd $(JS_DIR) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 $(JS_PREVIEW_TESTS)'

# The preview's Chromium benchmark alone (make bench reports it in BENCHMARKS.md).
bench.preview: js.deps js.wasm js.chromium js.example
	node $(JS_DIR)/bench/preview.mjs

# Serves the preview on 127.0.0.1 and prints its URL (PORT=… to choose).
preview: js.deps js.wasm js.example
	node $(JS_DIR)/preview/serve.mjs $(if $(PORT),--port $(PORT))

# Node end to end for the tiny, typical (20-step ReAct) and 1 MB requests,
# split into encode / wasm / decode; one run, a table.
bench.js: js.deps js.wasm
	node $(JS_DIR)/bench/bench.mjs
