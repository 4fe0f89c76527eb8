# shardroute: `make help` lists the targets. CI runs `make test` (see .ci/run).
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python

.PHONY: help setup check check-servers demo docs dist test-dist test-dist-full test fuzz fuzz-smoke test-rust test-c test-go test-java test-python test-node test-wasm test-schema test-playground test-oracles test-examples playground example-redis example-postgres example-edge bench check-counts check-versions vectors build clippy

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

setup: ## Install whatever is missing (apt, cargo, pip, npm); idempotent
	@scripts/setup.sh

build: setup ## Build the core and all three bindings
	cargo build --release -p shardroute-conformance --bin demo
	bindings-py/build.sh
	bindings-node/build.sh
	bindings-wasm/build.sh

demo: build ## Route the demo keys through Rust, Python, Node and WASM and compare
	$(PY) scripts/demo.py

test: setup check-servers ## Run every test: core, conformance in every runner (Rust, Python, Node, WASM in Node and Chromium, C, Go, Java), bindings, type stubs, live servers, the installable packages
	rm -rf target/conformance
	$(MAKE) --no-print-directory test-rust test-c test-go test-java fuzz-smoke test-python test-node test-wasm test-schema test-playground test-oracles test-examples test-dist
	$(MAKE) --no-print-directory check-counts check-versions

check: setup ## The everyday loop (~3 min warm): Rust tests, four conformance runners (no browser), the bindings' unit tests, stubtest, tsc; no live server, fuzzing or browser
	rm -rf target/conformance
	cargo test -q -p shardroute -p shardroute-conformance -p shardroute-cli -- --skip etcd_ --skip zookeeper_  # cli/tests/distribute.rs: the etcd_ and zookeeper_ tests start etcd and ZooKeeper (make test runs them)
	cargo clippy -q -p shardroute -p shardroute-conformance -p shardroute-cli --all-targets -- -D warnings
	$(MAKE) --no-print-directory test-c
	SHARDROUTE_TIER=check bindings-py/test.sh
	SHARDROUTE_TIER=check bindings-node/test.sh
	SHARDROUTE_TIER=check bindings-wasm/test.sh
	python3 scripts/check-conformance-counts.py --without wasm-chromium --without java --without go  # make test runs these three
	python3 scripts/check-ports.py  # no port picked by bind-0-then-close (issue 41)
	python3 scripts/check-shell-decisions.py  # no literal timeout, timer or status rule in a shell (issues 35, 36)
	python3 scripts/api-table.py --check  # docs/api.md current; no new name against the per-language rule (issue 39)

check-servers: ## Fail early unless every program a test starts is installed by setup's one package table (scripts/setup.sh)
	@python3 scripts/check-servers.py
	@python3 scripts/check-ports.py
	@python3 scripts/check-shell-decisions.py
	@$(PY) -m pytest -q -p no:cacheprovider scripts/tests

dist: setup ## Build the installable packages into dist/: the Python wheels (abi3; Linux x86_64 and aarch64 with glibc and with musl, macOS x86_64 and arm64) and sdist, the command line's wheel (shardroute-cli), the npm tarballs of the addon (shardroute and one package per platform) and the WASM package
	rm -rf dist && mkdir -p dist
	cd bindings-py && ../.venv/bin/maturin build --release --quiet --out ../dist
	cd bindings-py && ../.venv/bin/maturin sdist --out ../dist
	cd cli && ../.venv/bin/maturin build --release --quiet --out ../dist
	bindings-node/build.sh
	$(PY) scripts/platforms.py dist dist
	bindings-wasm/build.sh
	cd bindings-wasm && npm pack --silent --pack-destination ../dist >/dev/null
	@ls -l dist

# `make test-dist` (and so `make test`) builds and checks the packages of the two platforms
# that run here: Linux x86_64 natively, Linux aarch64 (glibc) under qemu. The musl and macOS
# cross builds, which can only be read here, and the core as a static musl binary are
# `make test-dist-full`'s (and `make dist` builds every platform). scripts/platforms.py reads
# SHARDROUTE_PLATFORMS.
test-dist: export SHARDROUTE_PLATFORMS ?= linux-x64-gnu,linux-arm64-gnu
test-dist-full: export SHARDROUTE_PLATFORMS =
test-dist: dist ## The packages of the platforms that run here (Linux x86_64, aarch64 under qemu): each installed in a clean venv or npm project and routing a key; every artifact's tag checked against its binary; every conformance vector through the aarch64 wheel and addon
test-dist-full: dist ## test-dist over all six platforms: also the musl and macOS wheels and addons built and checked, and every vector through the core as a static musl binary (x86_64, aarch64 under qemu)
test-dist test-dist-full:
	scripts/test-dist.sh dist
	$(PY) scripts/check-artifacts.py dist
	$(PY) scripts/test-dist-emulated.py dist

test-rust: ## Core unit, property and doc tests, no_std builds, the Rust conformance runner, the CLI, clippy, rustdoc, the module graph
	cargo test -p shardroute -p shardroute-conformance -p shardroute-cli
	cargo test -p shardroute --no-default-features --features all-strategies --lib --tests
	cargo clippy -q -p shardroute -p shardroute-conformance -p shardroute-cli --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc -q -p shardroute --no-deps
	python3 scripts/check-module-graph.py

fuzz-smoke: ## Every fuzz target of fuzz/ for 30 s, two at a time (docs/fuzzing.md); fails on a crash, hang or OOM
	scripts/fuzz.sh 30

fuzz: ## The fuzzing campaign: every target for 10 minutes, two at a time; figures in docs/fuzzing.md
	scripts/fuzz.sh 600

test-c: ## The C ABI (libshardroute, docs/c.md): clippy, the header's freshness, the C conformance runner and the hostile-argument suite, both again under valgrind (a leak or invalid access fails), docs/c.md's example built with pkg-config
	cargo clippy -q -p shardroute-c --all-targets -- -D warnings
	cargo test -q -p shardroute-c --lib
	conformance/c/test.sh

test-go: ## The Go package (bindings-go/, cgo over libshardroute, standard library only): go vet, its API tests, its README's example, and the Go conformance runner over every vector
	bindings-go/test.sh

test-java: ## The Java package (bindings-java/, JNA over libshardroute): its API tests, its README's example, and the Java conformance runner over every vector
	bindings-java/test.sh

test-python: ## The Python package: pytest (conformance + API) and mypy stubtest; the Redis shells' live tests on the oldest redis-py supported (no hiredis) and the newest (hiredis), a warning a failure
	bindings-py/test.sh
	scripts/test-redis-versions.sh

test-node: ## The Node addon: node --test (conformance + API) and tsc
	bindings-node/test.sh

test-wasm: ## The WASM package under Node and in headless Chromium, its edge examples in workerd, Deno, workers and bundles, its route build (shardroute-wasm/route) in all four, the size budget of both builds (bindings-wasm/size-budget.json), and tsc
	bindings-wasm/test.sh

test-schema: ## The JSON Schemas (docs/topology.schema.json, docs/dictionary.schema.json) against the core, every committed example and the vectors (needs the Python package)
	$(PY) -m pytest -q -p no:cacheprovider conformance/schema_tests

test-playground: ## The browser playground in headless Chromium, its moved counts checked against the Node addon (saves docs/playground.png)
	bindings-wasm/build.sh
	bindings-node/build.sh
	node --test playground/test/playground.test.mjs

playground: ## Serve the browser playground (playground/) on http://127.0.0.1:8000/playground/ (PORT=... for another port)
	bindings-wasm/build.sh
	node playground/serve.mjs

test-oracles: ## Every compatibility profile against the real systems and client libraries (docs/compatibility.md)
	$(PY) -m pytest -q -p no:cacheprovider conformance/oracles
	cd conformance/oracles && node --test

test-examples: build ## The live-cluster examples against real servers, asserting their counts (examples/*/README.md)
	$(PY) -m pytest -q -p no:cacheprovider -s examples/redis-cluster
	MYPYPATH=examples $(PY) -m mypy --strict --no-incremental examples/postgres-messages
	$(PY) -m pytest -q -p no:cacheprovider -s examples/postgres-messages
	MYPYPATH=examples $(PY) -m mypy --strict --no-incremental examples/topology-distribution
	$(PY) -m pytest -q -p no:cacheprovider -s examples/topology-distribution
	MYPYPATH=examples $(PY) -m mypy --strict --no-incremental examples/edge-routing-tier
	$(PY) -m pytest -q -p no:cacheprovider -s examples/edge-routing-tier

example-redis: build ## A live Redis Cluster reshards and fails over under a Python and a Node service (examples/redis-cluster)
	$(PY) examples/redis-cluster/run.py

example-postgres: build ## Sharded PostgreSQL grows from 5 to 10 shards under a Python and a Node service, topology in etcd (examples/postgres-messages)
	$(PY) examples/postgres-messages/run.py

example-edge: build ## The edge is the routing tier: one worker in workerd and Deno routes to PostgreSQL shard services growing from 5 to 10 (examples/edge-routing-tier)
	$(PY) examples/edge-routing-tier/run.py

docs: setup ## The API reference in target/docs/ (not committed): rustdoc for the core, Python from the .pyi and the docstrings, TypeScript from the .d.ts files; every link checked
	rm -rf target/docs && mkdir -p target/docs
	RUSTDOCFLAGS="-D warnings" cargo doc -q -p shardroute --no-deps
	cp -r target/doc target/docs/rust
	bindings-py/build.sh
	$(PY) scripts/api-docs.py target/docs
	node scripts/api-docs-ts.mjs target/docs/typescript
	python3 scripts/check-links.py target/docs
	@echo "open target/docs/index.html"

check-counts: ## Fail unless every conformance runner passed the same non-zero count
	python3 scripts/check-conformance-counts.py

check-versions: ## Fail unless every package carries the workspace version
	python3 scripts/check-versions.py

vectors: ## Regenerate conformance/vectors from the core (review the diff!)
	cargo run -q -p shardroute-conformance --bin generate-vectors

bench: setup build ## Run every benchmark side by side with its peers and write docs/benchmarks.md
	rm -rf target/bench && mkdir -p target/bench
	@[ ! -f bench/python/requirements.txt ] || .venv/bin/pip install -q --disable-pip-version-check -r bench/python/requirements.txt
	@[ ! -f bench/node/package-lock.json ] || (cd bench/node && npm ci --silent --no-audit --no-fund)
	{ echo "## Strategies side by side (Rust core)"; echo; cargo run -q --release -p shardroute-conformance --bin compare-strategies; } > target/bench/strategies.md
	{ echo "## Dictionary planner and encodings"; echo; cargo run -q --release -p shardroute-conformance --bin bench-dictionary; } > target/bench/dictionary.md
	$(PY) bench/limits/bench.py --out target/bench/limits.md
	$(PY) scripts/hash-flooding.py --out target/bench/flooding.md
	cargo bench -q -p shardroute --bench peers
	@[ ! -f bench/python/bench.py ] || $(PY) bench/python/bench.py
	$(PY) bench/python/scatter.py
	@[ ! -f bench/node/bench.mjs ] || node bench/node/bench.mjs
	@[ ! -f bench/browser/bench.mjs ] || node bench/browser/bench.mjs
	node bench/edge/bench.mjs
	bench/ffi/bench.sh
	$(PY) examples/redis-cluster/bench.py
	$(PY) bench/python/redis_async.py
	$(PY) bench/node/redis_cluster.py
	$(PY) examples/topology-distribution/bench.py
	$(PY) bench/postgres/bench.py
	python3 scripts/assemble-benchmarks.py
