#!/usr/bin/env bash
# `make mutants`: cargo-mutants over the core modules, one run per module, each with the
# tests that exercise it (unit tests with `--lib`; an integration filter where the module
# is only reachable through the binary). Equivalent mutants are excluded, with reasons, in
# .cargo/mutants.toml. Results: target/mutants-out/MODULE/mutants.out/{caught,missed,
# timeout,unviable}.txt and a summary table at the end (also in target/mutants-out/summary.md).
#
# Usage: scripts/mutants.sh [MODULE...]   (default: every module below)
# Environment: MUTANTS_JOBS (default 1), MUTANTS_TIMEOUT (test timeout, s, default 120),
# MUTANTS_ARGS (more cargo-mutants arguments; `--iterate` re-tests only the mutants the
# last run of a module did not catch).
set -euo pipefail
cd "$(dirname "$0")/.."

# module | files (space-separated globs) | cargo arguments for build and test
TABLE='
polling   | src/analyze/polling.rs                     | --lib
cache     | src/analyze/cache.rs src/api/cache/*.rs    | --lib
tcp       | src/capture/pcap/tcp.rs                    | --lib
framing   | src/http/framing.rs                        | --lib
sse       | src/api/sse.rs                             | --lib
tools     | src/api/tools.rs                           | --lib
redact    | src/trace/redact.rs                        | --lib
normalize | src/api/normalize/*.rs                     | --lib
replay    | src/capture/resend/*.rs                    | --lib
'

command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants@27.1.0
out=target/mutants-out
mkdir -p "$out"
want=("$@")
rows=()
while IFS='|' read -r name files args; do
    name=$(echo "$name" | xargs)
    [ -z "$name" ] && continue
    if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then continue; fi
    file_args=()
    for f in $files; do file_args+=(--file "$f"); done
    # --cargo-arg reaches both the build (`cargo test --no-run`) and the test run: with
    # `--lib` each mutant rebuilds only the library's unit-test binary, not the CLI and
    # the integration binary.
    cargo_args=()
    for a in $args; do cargo_args+=("--cargo-arg=$a"); done
    echo "== mutants: $name ($files) with cargo test $args"
    start=$(date +%s)
    # The scratch copy builds into this tree's target/ (profile `mutants`), so the
    # dependencies are built once for all modules.
    CARGO_TARGET_DIR="$PWD/target" cargo mutants --profile mutants --no-shuffle \
        --jobs "${MUTANTS_JOBS:-1}" --timeout "${MUTANTS_TIMEOUT:-120}" --build-timeout 1800 \
        "${file_args[@]}" "${cargo_args[@]}" ${MUTANTS_ARGS:-} -o "$out/$name" \
        | tee "$out/$name.log" || true
    secs=$(( $(date +%s) - start ))
    d="$out/$name/mutants.out"
    count() { if [ -s "$d/$1.txt" ]; then grep -c . "$d/$1.txt"; else echo 0; fi; }
    tried=$(( $(count caught) + $(count missed) + $(count timeout) + $(count unviable) ))
    rows+=("| $name | $tried | $(count caught) | $(count missed) | $(count timeout) | $(count unviable) | $((secs / 60)) min $((secs % 60)) s |")
done <<< "$TABLE"

{
    echo "| module | tried | caught | missed | timeout | unviable | wall time |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
} | tee "$out/summary-$(date +%Y%m%d-%H%M%S).md"
for row in "${rows[@]}"; do
    name=$(echo "$row" | cut -d'|' -f2 | xargs)
    if [ -s "$out/$name/mutants.out/missed.txt" ]; then
        echo "== missed in $name:"; cat "$out/$name/mutants.out/missed.txt"
    fi
done
