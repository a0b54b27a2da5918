# JavaScript binding (bindings/js): npm dependencies, the packaged module, the
# Node tests and the benchmarks (the prompt preview, on the binding's public
# API, is its own package: preview/preview.mk).
# Included by the root Makefile, which defines WASM and the wasm target.

JS_DIR      := bindings/js
JS_PKG_WASM := $(JS_DIR)/assembly.wasm
JS_STAMP    := $(JS_DIR)/node_modules/.polyloop-assembly-js.stamp
CHROMIUM    ?= /usr/bin/chromium
# apt-get as root, through sudo otherwise.
JS_SUDO     := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: js.deps js.wasm js.chromium js.chromium.run test.js test.js.node test.js.dist test.limits.js dist.js dist.js.run bench.js fmt.js lint.js

# `make test` includes the JavaScript binding and its built tarball; `make
# dist` writes the tarball; `make test.limits` runs the full-size limit cases;
# `make bench` runs its benches through tools/benchreport.
test.all: test.js test.js.dist
dist: dist.js
test.limits: test.limits.js

# node_modules from the committed package-lock.json (npm ci: exact pins);
# the log in artifacts/test/js.deps.log.
js.deps: $(JS_STAMP)
$(JS_STAMP): $(JS_DIR)/package.json $(JS_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (with npm)" >&2; exit 1; }
	@$(SETUP) js.deps -- bash -c 'cd $(JS_DIR) && npm ci --no-audit --no-fund --loglevel=error'
	@touch $@

# prettier (.prettierrc.json, .prettierignore) and eslint (eslint.config.js),
# both pinned in package.json, on the binding's JavaScript, TypeScript, JSON
# and CSS.
JS_PRETTIER_FILES := "**/*.{js,mjs,cjs,ts,mts,cts,json,css}"
fmt: fmt.js
lint: lint.js
fmt.js: js.deps
	cd $(JS_DIR) && node_modules/.bin/prettier --write --list-different $(JS_PRETTIER_FILES)
	$(JS_DIR)/node_modules/.bin/prettier --config $(JS_DIR)/.prettierrc.json --write --list-different "scripts/**/*.mjs"
lint.js: js.deps
	cd $(JS_DIR) && node_modules/.bin/eslint .

# The module packaged beside the binding (git-ignored, built from source),
# and src/version.js (git-ignored): the project's version from VERSION, the one
# place it is written, and the module's SHA-256.
JS_VERSION_JS := $(JS_DIR)/src/version.js
js.wasm: $(JS_PKG_WASM) $(JS_VERSION_JS)
$(JS_PKG_WASM): $(WASM)
	@cp $(WASM) $@
$(JS_VERSION_JS): $(JS_PKG_WASM) VERSION
	@printf '%s\n' \
		"// Written by \`make js.wasm\` from VERSION and the module's SHA-256: never edited, never committed." \
		"/** The project's version (the file VERSION of the repository). */" \
		"export const version = \"$$(tr -d '[:space:]' < VERSION)\";" \
		"/** Lowercase hex SHA-256 of the packaged assembly.wasm. */" \
		"export const moduleSha256 = \"$$(sha256sum $(JS_PKG_WASM) | cut -c1-64)\";" > $@

# Debian's Chromium for the browser test, installed when missing (the log in
# artifacts/test/js.chromium.log).
js.chromium:
	@[ -x $(CHROMIUM) ] || $(SETUP) js.chromium -- $(MAKE) --no-print-directory js.chromium.run
	@[ -x $(CHROMIUM) ] || { echo "$(CHROMIUM) is missing: apt-get install chromium" >&2; exit 1; }
js.chromium.run:
	$(JS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$(JS_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# The npm tarball, as users install it: a staging copy of the package with
# the module, LICENSE, the screenshot and package.json's version stamped from
# VERSION (the one place of the version), packed into dist/. The package's
# prepack script refuses to pack without them. Node's entry in the package is
# src/node.bundle.js: src/node.js with its dependencies in one file (esbuild,
# names kept), since Node's loader spent ~17 ms of a new process's first call
# resolving and reading the ~45 files of the binding, the WASI shim and
# msgpack one by one (RATIONALE.md, "Node's first call"); the bundled
# dependencies' licences go beside it (THIRD-PARTY-LICENSES). Browsers keep
# the sources: their bundler resolves the dependencies.
JS_STAGE := build/js-dist
JS_DIST_DIR ?= dist
dist.js: js.wasm js.deps
	@$(SETUP) dist.js -- $(MAKE) --no-print-directory dist.js.run
dist.js.run:
	rm -rf $(JS_STAGE) && mkdir -p $(JS_STAGE)/docs $(JS_DIST_DIR)
	cp -R $(JS_DIR)/package.json $(JS_DIR)/README.md $(JS_DIR)/src $(JS_DIR)/scripts $(JS_PKG_WASM) LICENSE $(JS_STAGE)/
	cp $(JS_DIR)/docs/*.png $(JS_STAGE)/docs/
	cd $(JS_DIR) && node_modules/.bin/esbuild src/node.js --bundle --platform=node --format=esm --target=node20 \
		--keep-names --legal-comments=inline --log-level=warning --outfile=$(abspath $(JS_STAGE))/src/node.bundle.js
	node $(JS_DIR)/scripts/stage.mjs $(JS_STAGE) VERSION $(JS_DIR)/node_modules
	rm -f $(JS_DIST_DIR)/polyloop-assembly-*.tgz
	cd $(JS_STAGE) && node scripts/prepack.mjs && npm pack --pack-destination $(abspath $(JS_DIST_DIR)) --loglevel=error

# The Node suite (vectors, properties, bad values, pool, traps, types; the
# browser build in Chromium is tested through the preview, preview/preview.mk);
# one summary line (scripts/suite), the log in artifacts/test/.
JS_TESTS = $$(ls test/*.test.mjs | grep -v -e test/dist.test.mjs)
test.js: js.deps js.wasm js.chromium
	@$(SUITE) js -- bash -c 'cd $(JS_DIR) && CHROMIUM=$(CHROMIUM) node --test --test-concurrency=1 --test-reporter=tap $(JS_TESTS)'

# The bounded-resources family at full size (make test.limits; docs/SPEC.md §4 and §6),
# then the full-size cases of the JavaScript host limits (several GB of
# memory).
test.limits.js: js.deps js.wasm
	@POLYLOOP_LIMITS=full $(SUITE) limits.js -- bash -c 'cd $(JS_DIR) && node --test --test-reporter=tap test/limits.test.mjs test/deep-json.test.mjs'
	@POLYLOOP_HEAVY_TESTS=1 POLYLOOP_SKIP_BROWSER=1 $(SUITE) limits.js.host -- bash -c 'cd $(JS_DIR) && node --test --test-concurrency=1 --test-reporter=tap test/host-limits.test.mjs test/pool.test.mjs'

test.js.node: js.deps js.wasm
	cd $(JS_DIR) && POLYLOOP_SKIP_BROWSER=1 node --test $(JS_TESTS)

# The built tarball installed into a new npm project: the shared vectors
# through it, its types in a Node-only and a browser project, and minimal
# browser apps bundled with esbuild and with Vite, run in Chromium.
test.js.dist: dist.js js.deps js.chromium
	@$(SUITE) js.dist -- bash -c 'cd $(JS_DIR) && CHROMIUM=$(CHROMIUM) POLYLOOP_DIST_TARBALL=$$(ls $(abspath $(JS_DIST_DIR))/polyloop-assembly-*.tgz) node --test --test-reporter=tap test/dist.test.mjs'

# Node end to end for the tiny, typical (20-step ReAct) and 1 MB requests,
# split into encode / wasm / decode; one run, a table.
bench.js: js.deps js.wasm dist.js
	node $(JS_DIR)/bench/bench.mjs
