#!/bin/sh
# The README's benchmark figures in one run: whole-process timings with the workplace's
# `farm-bench` against the peers, the floors of the pcap job (trace to /dev/null; the disk
# copying the capture durably, through the page cache and past it), the other API dialects
# at 100 MB, the viewer's open of the 1 GB trace (issue 30), the criterion diff bench, the
# server bench and the 60 s load test. Inputs are the benches' generated files
# in $DIR (default target/bench-inputs), made first when missing.
# Usage: scripts/bench-figures.sh [DIR] > figures.txt
set -eu
DIR=${1:-target/bench-inputs}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
cargo build --locked --profile profiling
B=$PWD/target/profiling/agentwire
make_input() { # FILE BENCH VAR VALUE
  [ -s "$1" ] || env "$3=$4" AGENTWIRE_BENCH_WRITE="$1" cargo bench --locked --profile profiling --bench "$2" >/dev/null
}
make_input "$DIR/100m.pcap" pcap AGENTWIRE_BENCH_PCAP_MB 100
make_input "$DIR/1g.pcap" pcap AGENTWIRE_BENCH_PCAP_MB 1024
make_input "$DIR/100m.jsonl" analyze AGENTWIRE_BENCH_REQUESTS 1000
make_input "$DIR/1g.jsonl" analyze AGENTWIRE_BENCH_REQUESTS 10000
make_input "$DIR/view-1g.jsonl" viewer AGENTWIRE_BENCH_REQUESTS 10000
for d in responses gemini chat; do # the other dialects, 100 MB each
  [ -s "$DIR/100m-$d.pcap" ] || AGENTWIRE_BENCH_DIALECT=$d AGENTWIRE_BENCH_PCAP_MB=100 AGENTWIRE_BENCH_WRITE="$DIR/100m-$d.pcap" cargo bench --locked --profile profiling --bench pcap >/dev/null
  [ -s "$DIR/100m-$d.jsonl" ] || AGENTWIRE_BENCH_DIALECT=$d AGENTWIRE_BENCH_REQUESTS=1000 AGENTWIRE_BENCH_WRITE="$DIR/100m-$d.jsonl" cargo bench --locked --profile profiling --bench analyze >/dev/null
done
[ -s "$DIR/diff/a.json" ] || { mkdir -p "$DIR/diff"; AGENTWIRE_BENCH_WRITE="$DIR/diff" cargo bench --locked --profile profiling --bench diff >/dev/null; }
set -x
date -u; uptime
farm-bench -n 5 --timeout 300 --vs "tshark -r $DIR/100m.pcap -Q --export-objects http,$DIR/tshark-objects" -- "$B" pcap "$DIR/100m.pcap" -o "$DIR/x100.jsonl" --force
farm-bench -n 5 --timeout 300 -- "$B" pcap "$DIR/1g.pcap" -o "$DIR/x1g.jsonl" --force
farm-bench -n 5 --timeout 300 -- "$B" pcap "$DIR/1g.pcap" -o /dev/null
farm-bench -n 5 --timeout 300 -- dd if="$DIR/1g.pcap" of="$DIR/dd-copy.pcap" bs=4M conv=fsync
farm-bench -n 5 --timeout 300 -- dd if="$DIR/1g.pcap" of="$DIR/dd-copy.pcap" bs=4M oflag=direct conv=fsync
rm -f "$DIR/dd-copy.pcap" "$DIR/x1g.jsonl"
farm-bench -n 5 --timeout 300 --vs "jq -c .request.body.json.model $DIR/100m.jsonl" -- "$B" analyze "$DIR/100m.jsonl" --format json
farm-bench -n 5 --timeout 600 --vs "jq -c .request.body.json.model $DIR/1g.jsonl" -- "$B" analyze "$DIR/1g.jsonl" --format json
for d in responses gemini chat; do
  farm-bench -n 5 --timeout 300 -- "$B" pcap "$DIR/100m-$d.pcap" -o "$DIR/x100-$d.jsonl" --force
  farm-bench -n 5 --timeout 300 -- "$B" analyze "$DIR/100m-$d.jsonl" --format json
done
rm -f "$DIR"/x100-*.jsonl
# issue 30: `view` of the 1,080 MB / 10,000-request trace: the index built (the URL and
# the viewer's `indexed in N ms`), the turn list and last turn served, peak RSS (VmHWM);
# then the whole process's peak RSS by /usr/bin/time -v (stopped by SIGINT after 20 s)
AGENTWIRE_BENCH_TRACE="$DIR/view-1g.jsonl" cargo bench --locked --profile profiling --bench viewer 2>&1 | grep "^view of"
/usr/bin/time -v timeout -s INT 20 "$B" view "$DIR/view-1g.jsonl" 2>&1 >/dev/null | grep -E "indexed in|Maximum resident" || true
farm-bench -n 10 --timeout 100 -- "$B" diff "$DIR/diff/a.json" "$DIR/diff/b.json"
cargo bench --locked --profile profiling --bench diff 2>&1 | grep -E "time:|^diff|^parse|body sizes"
cargo bench --locked --profile profiling --bench server 2>&1 | grep -v "Compiling\|Finished\|Running"
AGENTWIRE_LOAD_SECONDS=60 cargo test --locked --test it -- limits::sustained --nocapture 2>&1 | grep -v "Compiling\|Finished\|Running"
uptime; date -u
