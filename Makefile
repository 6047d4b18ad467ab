# agentwire — make targets. `make` lists them.
SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# What building needs (libpcap headers, for live capture), and what the tests add: tshark as
# their cross-check, chromium (headless) for the HTML reports, shells and man for completions.
BUILD_PACKAGES := libpcap-dev
TEST_PACKAGES := tshark man-db fish zsh chromium
# PySpark's tests need a JRE: Debian's default one, only where no `java` is on the PATH.
TEST_PACKAGES += $(if $(shell command -v java),,default-jre-headless)
BIN := target/debug/agentwire
# `make install`: where to (PREFIX, DESTDIR for packagers), cargo flags (FEATURES, e.g.
# --no-default-features for a build without libpcap), or an already built binary (FROM).
PREFIX ?= /usr/local
DESTDIR ?=
FEATURES ?=
FROM ?=

.DEFAULT_GOAL := help

.PHONY: help deps test-deps build demo test lint doc bench bench-figures load mutants clean-demo install uninstall

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# $(call apt,PACKAGES,WHY): install the Debian packages of PACKAGES that are missing, saying why.
define apt
	@need=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
	if [ -n "$$need" ]; then \
	  echo "deps: installing system packages:$$need ($(2))"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null; \
	else echo "deps: system packages present ($(1))"; fi
endef

deps: ## install what building and running need: libpcap headers (apt-get), and checks for cargo, npm, python3
	$(call apt,$(BUILD_PACKAGES),libpcap headers for live capture)
	@for t in cargo npm python3; do command -v $$t >/dev/null || { echo "deps: $$t is missing; install it first"; exit 1; }; done
	@echo "deps: cargo, npm and python3 present"

test-deps: deps ## also install what the tests use (apt-get): tshark, headless chromium, fish, zsh, man-db, a JRE for PySpark
	$(call apt,$(TEST_PACKAGES),tshark as the tests' cross-check; chromium (headless) to test the HTML reports; fish, zsh and man-db for the shell completions and man page; a JRE for the PySpark test)

build: deps ## build agentwire (debug)
	cargo build --locked

# `make demo`: two published Claude Code versions (DEMO_A, DEMO_B; their binaries are cached
# by agentwire under ~/.cache/agentwire, their traces in target/demo, so a second run records
# nothing) and a session with a background job.
DEMO := target/demo
DEMO_A ?= 2.1.303
DEMO_B ?= 2.1.304

demo: build $(DEMO)/cc$(DEMO_A).jsonl $(DEMO)/cc$(DEMO_B).jsonl $(DEMO)/bg-session-$(DEMO_B).jsonl ## the jobs people come for: diff two published Claude Code versions, audit a session for polling waste and cache misses, write both as HTML reports
	@echo "== 1. What changed between Claude Code $(DEMO_A) and $(DEMO_B)? (the first request of each, sent to a gateway URL)"
	$(BIN) diff $(DEMO)/cc$(DEMO_A).jsonl $(DEMO)/cc$(DEMO_B).jsonl
	@echo "== 2. Audit a session in which Claude Code $(DEMO_B) runs a background build and polls its output: polling waste, cache misses, the job"
	$(BIN) analyze $(DEMO)/bg-session-$(DEMO_B).jsonl
	@echo "== 3. The same answers as files to open or attach: self-contained HTML reports (charts, side-by-side diffs; they load nothing)"
	$(BIN) report analyze $(DEMO)/bg-session-$(DEMO_B).jsonl --force -o $(DEMO)/audit-bg-session-$(DEMO_B).html
	$(BIN) report diff $(DEMO)/cc$(DEMO_A).jsonl $(DEMO)/cc$(DEMO_B).jsonl --force -o $(DEMO)/diff-$(DEMO_A)-$(DEMO_B).html
	@echo "== traces and reports kept in $(DEMO)/ (make clean-demo removes them; Markdown to paste into a PR: $(BIN) report diff $(DEMO)/cc$(DEMO_A).jsonl $(DEMO)/cc$(DEMO_B).jsonl -o diff.md)"
	@echo "== open in a browser: the audit $(abspath $(DEMO))/audit-bg-session-$(DEMO_B).html and the version diff"
	@echo "$(abspath $(DEMO))/diff-$(DEMO_A)-$(DEMO_B).html"

# One published version saying hello (`-p hello`) under the fake server, by base URL.
$(DEMO)/cc%.jsonl: | build
	@mkdir -p $(DEMO)
	@echo "== recording Claude Code $* (downloads it from npm the first time)"
	$(BIN) record --cli claude-code@$* --route base-url --force -o $@.part
	@mv $@.part $@

# Claude Code DEMO_B driven by a scenario through a background Bash build, three polls of its
# output file and the task notification (named after DEMO_B: another DEMO_B records anew).
$(DEMO)/bg-session-$(DEMO_B).jsonl: | build
	@mkdir -p $(DEMO)
	@echo "== recording a Claude Code $(DEMO_B) session with a background job (captures/scenarios/bg-build.json)"
	$(BIN) record --cli claude-code@$(DEMO_B) --route base-url --force --script captures/scenarios/bg-build.json -o $@.part -- -p "run the build" --allowedTools Bash
	@mv $@.part $@

test: test-deps ## run the test suite (unit, integration with real servers, CLIs and captures), then diff/analyze on a build without libpcap
	cargo test --locked
	cargo test --locked --no-default-features --test it -- diff analyze features exit_codes --skip codex:: --skip gemini:: --skip opencode:: --skip viewer::

lint: ## rustfmt, clippy and rustdoc, warnings as errors (what CI checks besides tests)
	cargo fmt --check
	cargo clippy --locked --all-targets -- -D warnings
	cargo clippy --locked --all-targets --no-default-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps

doc: ## build the API docs
	cargo doc --no-deps

bench: test-deps ## run the benchmarks (installs claude-tap and mitmproxy from PyPI into target/bench-venv for the comparisons)
	@[ -x target/bench-venv/bin/claude-tap ] && [ -x target/bench-venv/bin/mitmdump ] || { echo "bench: installing the peer tools claude-tap and mitmproxy (PyPI) into target/bench-venv"; python3 -m venv target/bench-venv && target/bench-venv/bin/pip install -q claude-tap mitmproxy; }
	cargo bench

bench-figures: test-deps ## the README's benchmark figures in one run (farm-bench against tshark and jq, the pcap floors, server bench, load test): scripts/bench-figures.sh
	scripts/bench-figures.sh

load: ## 60 s of 100 KB POSTs at full speed against `serve`: peak RSS from /proc (< 256 MB) and nothing lost (CI runs 5 s)
	AGENTWIRE_LOAD_SECONDS=60 cargo test --locked --test it -- limits::sustained --nocapture
# `make mutants`: every core module; `make mutants MODULES="polling sse"` for some. Slow (one
# incremental build per mutant): not part of CI. Table and exclusions: scripts/mutants.sh,
# .cargo/mutants.toml; results in target/mutants-out/.
MODULES ?=
mutants: ## mutation testing of the core modules with cargo-mutants (slow; not in CI): tried, caught, missed per module
	scripts/mutants.sh $(MODULES)

install: ## install agentwire, its man pages and bash/zsh/fish/powershell completions under PREFIX (default /usr/local)
	@set -e; from="$(FROM)"; \
	if [ -z "$$from" ]; then cargo build --release --locked $(FEATURES); from=target/release/agentwire; fi; \
	root="$(DESTDIR)$(PREFIX)"; \
	install -Dm755 "$$from" "$$root/bin/agentwire"; \
	mkdir -p "$$root/share/man/man1"; \
	"$$from" man --dir "$$root/share/man/man1"; \
	install -d "$$root/share/bash-completion/completions" "$$root/share/zsh/site-functions" \
	  "$$root/share/fish/vendor_completions.d" "$$root/share/powershell/Modules/agentwire"; \
	"$$from" completions bash > "$$root/share/bash-completion/completions/agentwire"; \
	"$$from" completions zsh > "$$root/share/zsh/site-functions/_agentwire"; \
	"$$from" completions fish > "$$root/share/fish/vendor_completions.d/agentwire.fish"; \
	"$$from" completions powershell > "$$root/share/powershell/Modules/agentwire/agentwire.ps1"; \
	echo "installed $$root/bin/agentwire, man pages in $$root/share/man/man1, completions for bash, zsh, fish and powershell under $$root/share"

uninstall: ## remove what `make install` put under PREFIX
	rm -f "$(DESTDIR)$(PREFIX)/bin/agentwire" "$(DESTDIR)$(PREFIX)"/share/man/man1/agentwire*.1 \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/agentwire" \
	  "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_agentwire" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/agentwire.fish"
	rm -rf "$(DESTDIR)$(PREFIX)/share/powershell/Modules/agentwire"

clean-demo: ## remove the demo output
	rm -rf target/demo
