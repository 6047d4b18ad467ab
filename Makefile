# agentwire — make targets. `make` lists them.
SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libpcap-dev tshark chromium
BIN := target/debug/agentwire

.DEFAULT_GOAL := help

.PHONY: help deps build demo test lint doc bench clean-demo

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

deps: ## install what is missing: system packages (apt-get) and checks for cargo, npm, python3
	@need=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
	if [ -n "$$need" ]; then \
	  echo "deps: installing system packages:$$need (libpcap headers for live capture, tshark as the tests' cross-check, chromium (headless) to test the HTML reports)"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null; \
	else echo "deps: system packages present ($(APT_PACKAGES))"; fi
	@for t in cargo npm python3; do command -v $$t >/dev/null || { echo "deps: $$t is missing; install it first"; exit 1; }; done
	@echo "deps: cargo, npm and python3 present"

build: deps ## build agentwire (debug)
	cargo build --locked

demo: build ## record a sample agent session under the fake server, show and analyze it
	@mkdir -p target/demo
	@echo "== agentwire record: a small agent (captures/clients/mini_agent.py) driven by captures/scenarios/sample-agent.json"
	$(BIN) record --force --route base-url --script captures/scenarios/sample-agent.json -o target/demo/session.jsonl -- python3 captures/clients/mini_agent.py "build the project"
	@echo "== agentwire show target/demo/session.jsonl"
	$(BIN) show target/demo/session.jsonl
	@echo "== agentwire analyze target/demo/session.jsonl (polling, prompt cache, background jobs)"
	$(BIN) analyze target/demo/session.jsonl

test: deps ## run the test suite (unit, integration with real servers, CLIs and captures)
	cargo test --locked

lint: ## rustfmt, clippy and rustdoc, warnings as errors (what CI checks besides tests)
	cargo fmt --check
	cargo clippy --locked --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps

doc: ## build the API docs
	cargo doc --no-deps

bench: deps ## run the benchmarks (installs claude-tap and mitmproxy from PyPI into target/bench-venv for the comparisons)
	@[ -x target/bench-venv/bin/claude-tap ] && [ -x target/bench-venv/bin/mitmdump ] || { echo "bench: installing the peer tools claude-tap and mitmproxy (PyPI) into target/bench-venv"; python3 -m venv target/bench-venv && target/bench-venv/bin/pip install -q claude-tap mitmproxy; }
	cargo bench

clean-demo: ## remove the demo output
	rm -rf target/demo
