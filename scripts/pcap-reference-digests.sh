#!/usr/bin/env bash
# SHA-256 of the trace `agentwire pcap` writes for every shared capture, as the binary at
# one commit writes it: the reference `tests/it/pcap_identical.rs` holds the current binary
# to, byte for byte. Each capture is read from its own folder by its file name, so the
# trace's `source.file` does not depend on where the captures live.
#
#   scripts/pcap-reference-digests.sh COMMIT [CAPTURES_DIR] > tests/it/pcap_reference.sha256
#
# Builds COMMIT in a temporary git worktree (into target/pcap-reference: a cold build),
# then removes the worktree; AGENTWIRE_REFERENCE_BIN=PATH uses a binary already built
# from COMMIT instead.
set -euo pipefail
commit=${1:?usage: $0 COMMIT [CAPTURES_DIR]}
root=$(cd "${2:-$(git rev-parse --show-toplevel)/../shared/captures}" && pwd)
repo=$(git rev-parse --show-toplevel)
tree=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
git -C "$repo" worktree add --detach "$tree" "$commit" >/dev/null 2>&1
[ -n "${AGENTWIRE_REFERENCE_BIN:-}" ] || CARGO_TARGET_DIR="$repo/target/pcap-reference" cargo build --locked --quiet --manifest-path "$tree/Cargo.toml" >&2
bin=${AGENTWIRE_REFERENCE_BIN:-"$repo/target/pcap-reference/debug/agentwire"}
echo "# agentwire pcap at $(git -C "$repo" rev-parse "$commit"); regenerate: $0 COMMIT"
(cd "$root" && find . -type f \( -name '*.pcap' -o -name '*.pcapng' \) | sed 's|^\./||' | LC_ALL=C sort) |
while read -r rel; do
  # (a degraded capture exits 3: its trace is still the reference)
  digest=$(cd "$root/$(dirname "$rel")" && { "$bin" pcap "$(basename "$rel")" -o - 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)
  echo "$digest  $rel"
done
