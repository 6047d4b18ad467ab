//! Throughput of `agentwire pcap`: capture file → trace file, as the command does it
//! (extraction on one thread, the trace lines encoded on every core and written by a
//! writer thread).
//!
//! Generates a pcap in a temp dir (64 concurrent keep-alive flows on Ethernet, MTU 1500
//! (MSS 1448), a pure ACK every two data segments, 20–200 KB JSON request bodies, chunked
//! SSE replies), then measures MB/s and packets/s of turning it into a written trace.
//! Once per run it also times `tshark -r FILE --export-objects http,DIR` on the same file,
//! with tshark's default reassembly and with out-of-order reassembly on
//! (`-o tcp.reassemble_out_of_order:TRUE`), and prints the ratios (wall-clock, and per
//! CPU-second, which a busy shared machine distorts less), the load average and the
//! process's peak resident memory.
//!
//! The API spoken: `AGENTWIRE_BENCH_DIALECT` (`messages`, the default; `responses`,
//! `gemini`, `chat`), to compare the dialects at the same sizes.
//!
//! Size: `AGENTWIRE_BENCH_PCAP_MB` (default 100; the README figures use 100 and 1024).
//! Run: `cargo bench --bench pcap`. `AGENTWIRE_BENCH_WRITE=FILE` only writes the generated
//! capture to FILE and exits (to time `agentwire pcap` as a whole process on it).

use std::io::{BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Instant;

mod common;

use common::{api, Api};

use agentwire::capture::pcap::{read_file, Config, Extractor, TraceSink};
use agentwire::trace::{Context, TraceWriter};
use common::{load_average, measure, measure_children, peak_rss_kib, Took};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use etherparse::PacketBuilder;

const FLOWS: usize = 64;
const MSS: usize = 1448;

/// xorshift64: deterministic sizes without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
}

struct Flow {
    client: (Ipv4Addr, u16),
    server: (Ipv4Addr, u16),
    cseq: u32,
    sseq: u32,
}

fn request(rng: &mut Rng, api: Api) -> Vec<u8> {
    let n = rng.range(20_000, 200_000);
    let (target, open, item, close) = match api {
        Api::Messages => (
            "/v1/messages?beta=true",
            r#"{"model":"claude-x","max_tokens":4096,"stream":true,"messages":["#,
            r#"{"role":"user","content":[{"type":"text","text":"message I with some words in it, padding padding padding"}]},"#,
            r#"{"role":"user","content":"end"}]}"#,
        ),
        Api::Responses => (
            "/v1/responses",
            r#"{"model":"gpt-x","stream":true,"store":false,"input":["#,
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"message I with some words in it, padding padding padding"}]},"#,
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"end"}]}]}"#,
        ),
        Api::Gemini => (
            "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
            r#"{"contents":["#,
            r#"{"role":"user","parts":[{"text":"message I with some words in it, padding padding padding"}]},"#,
            r#"{"role":"user","parts":[{"text":"end"}]}]}"#,
        ),
        Api::Chat => (
            "/v1/chat/completions",
            r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":["#,
            r#"{"role":"user","content":"message I with some words in it, padding padding padding"},"#,
            r#"{"role":"user","content":"end"}]}"#,
        ),
    };
    let mut body = String::with_capacity(n + 200);
    body.push_str(open);
    let mut i = 0;
    while body.len() < n {
        body.push_str(&item.replace('I', &i.to_string()));
        i += 1;
    }
    body.push_str(close);
    let key = match api {
        Api::Messages => "x-api-key: sk-ant-api03-bench",
        Api::Gemini => "x-goog-api-key: AIzaBenchBenchBenchBenchBenchBenchBench",
        _ => "authorization: Bearer sk-proj-bench",
    };
    let mut r = format!(
        "POST {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n{key}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body.as_bytes());
    r
}

/// The events of one streamed reply of `deltas` text deltas of 8 characters, in `api`'s
/// own stream format (`event:` lines where the API sends them).
fn reply_events(api: Api, deltas: usize) -> Vec<String> {
    let mut events = Vec::new();
    match api {
        Api::Messages => {
            events.push(r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}"#.to_string());
            events.push("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}".into());
            for _ in 0..deltas {
                events.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"eight ch\"}}".into());
            }
            events.push(
                "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}"
                    .into(),
            );
            events.push("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":50}}".into());
            events.push("event: message_stop\ndata: {\"type\":\"message_stop\"}".into());
        }
        Api::Responses => {
            events.push(r#"event: response.created
data: {"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-x","output":[]}}"#.to_string());
            events.push(r#"event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}"#.into());
            for _ in 0..deltas {
                events.push(r#"event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"eight ch"}"#.into());
            }
            events.push(r#"event: response.completed
data: {"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-x","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":60}}}"#.into());
        }
        Api::Gemini => {
            for _ in 0..deltas {
                events.push(r#"data: {"candidates":[{"content":{"parts":[{"text":"eight ch"}],"role":"model"},"index":0}],"modelVersion":"gemini-x"}"#.into());
            }
            events.push(r#"data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":50,"totalTokenCount":60},"modelVersion":"gemini-x"}"#.into());
        }
        Api::Chat => {
            for _ in 0..deltas {
                events.push(r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"content":"eight ch"},"finish_reason":null}]}"#.into());
            }
            events.push(r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.into());
            events.push(r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60}}"#.into());
            events.push("data: [DONE]".into());
        }
    }
    events
}

fn sse_reply(rng: &mut Rng, api: Api) -> Vec<u8> {
    let mut r =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for e in reply_events(api, rng.range(40, 200)) {
        let e = format!("{e}\n\n");
        r.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}

/// Segments (from_client, seq, ack, payload range) of one exchange on a flow.
fn exchange_packets(f: &mut Flow, rng: &mut Rng, api: Api, out: &mut Vec<Vec<u8>>) {
    let req = request(rng, api);
    let resp = sse_reply(rng, api);
    for (from_client, data) in [(true, &req), (false, &resp)] {
        for (i, piece) in data.chunks(MSS).enumerate() {
            let (src, dst, seq, ack) = if from_client {
                (f.client, f.server, f.cseq, f.sseq)
            } else {
                (f.server, f.client, f.sseq, f.cseq)
            };
            out.push(packet(src, dst, seq, ack, piece));
            if from_client {
                f.cseq = f.cseq.wrapping_add(piece.len() as u32);
            } else {
                f.sseq = f.sseq.wrapping_add(piece.len() as u32);
            }
            if i % 2 == 1 {
                let (ack_seq, ack_ack) = if from_client {
                    (f.sseq, f.cseq)
                } else {
                    (f.cseq, f.sseq)
                };
                out.push(packet(dst, src, ack_seq, ack_ack, &[]));
            }
        }
    }
}

fn packet(
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    seq: u32,
    ack: u32,
    payload: &[u8],
) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src.0.octets(), dst.0.octets(), 64)
        .tcp(src.1, dst.1, seq, 65535)
        .ack(ack);
    let mut v = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut v, payload).unwrap();
    v
}

/// Write a pcap of about `mb` MB; returns (bytes, packets).
fn generate(path: &Path, mb: u64) -> (u64, u64) {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut hdr = Vec::new();
    for v in [
        0xa1b2_c3d4u32.to_le_bytes().to_vec(),
        2u16.to_le_bytes().to_vec(),
        4u16.to_le_bytes().to_vec(),
    ] {
        hdr.extend(v);
    }
    hdr.extend([0u8; 8]);
    hdr.extend(262_144u32.to_le_bytes());
    hdr.extend(1u32.to_le_bytes());
    w.write_all(&hdr).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let api = api();
    let mut flows: Vec<Flow> = (0..FLOWS)
        .map(|i| Flow {
            client: (Ipv4Addr::new(10, 0, 1, i as u8 + 1), 40000 + i as u16),
            server: (Ipv4Addr::new(10, 0, 0, 1), 8080),
            cseq: rng.next() as u32,
            sseq: rng.next() as u32,
        })
        .collect();
    let (mut bytes, mut packets, mut ts) = (hdr.len() as u64, 0u64, 1_700_000_000_000_000u64);
    let limit = mb << 20;
    while bytes < limit {
        // One exchange per flow, packets interleaved round-robin across flows.
        let mut queues: Vec<std::collections::VecDeque<Vec<u8>>> = flows
            .iter_mut()
            .map(|f| {
                let mut v = Vec::new();
                exchange_packets(f, &mut rng, api, &mut v);
                v.into()
            })
            .collect();
        while queues.iter().any(|q| !q.is_empty()) {
            for q in queues.iter_mut() {
                if let Some(p) = q.pop_front() {
                    ts += 10;
                    let mut rec = Vec::with_capacity(16 + p.len());
                    rec.extend(((ts / 1_000_000) as u32).to_le_bytes());
                    rec.extend(((ts % 1_000_000) as u32).to_le_bytes());
                    rec.extend((p.len() as u32).to_le_bytes());
                    rec.extend((p.len() as u32).to_le_bytes());
                    rec.extend(&p);
                    w.write_all(&rec).unwrap();
                    bytes += rec.len() as u64;
                    packets += 1;
                }
            }
        }
    }
    w.flush().unwrap();
    (bytes, packets)
}

/// `agentwire pcap PATH -o OUT`: exchanges written to the trace at `out`; returns their
/// count.
fn extract(path: &Path, out: &Path) -> u64 {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut ex = Extractor::new(Config::default());
    ex.set_source(Some(path.display().to_string()));
    let w = TraceWriter::create(out, &Context::new()).unwrap();
    let mut sink = TraceSink::new(w, threads);
    let mut n = 0u64;
    let mut packets = 0u32;
    read_file(path, &mut |p| {
        ex.packet(p);
        packets = packets.wrapping_add(1);
        if packets % 4096 == 0 {
            let xs = ex.take();
            n += xs.len() as u64;
            sink.write(xs).unwrap();
        }
    })
    .unwrap();
    let (rest, s) = ex.finish();
    assert_eq!(s.incomplete, 0);
    n += rest.len() as u64;
    sink.write(rest).unwrap();
    sink.finish().unwrap();
    n
}

/// The wall-clock and CPU time `tshark --export-objects http` takes on `path` (with `extra`
/// preferences), and the objects it exported; `None` without tshark.
fn tshark(path: &Path, dir: &Path, extra: &[&str]) -> Option<(Took, usize)> {
    let objects = dir.join("objects");
    std::fs::create_dir_all(&objects).unwrap();
    let (o, took) = measure_children(|| {
        std::process::Command::new("tshark")
            .arg("-r")
            .arg(path)
            .args(extra)
            .args([
                "--export-objects",
                &format!("http,{}", objects.display()),
                "-q",
            ])
            .output()
    });
    let n = std::fs::read_dir(&objects).map(|d| d.count()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&objects);
    o.ok()?.status.success().then_some((took, n))
}

fn bench(c: &mut Criterion) {
    let mb: u64 = std::env::var("AGENTWIRE_BENCH_PCAP_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    if let Some(out) = std::env::var_os("AGENTWIRE_BENCH_WRITE") {
        let (bytes, packets) = generate(Path::new(&out), mb);
        eprintln!(
            "wrote {bytes} bytes, {packets} packets to {}",
            Path::new(&out).display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.pcap");
    let t = Instant::now();
    let (bytes, packets) = generate(&path, mb);
    eprintln!(
        "generated {:.0} MB, {packets} packets in {:.1?}",
        bytes as f64 / 1e6,
        t.elapsed()
    );
    let rss_before = peak_rss_kib();
    let trace = dir.path().join("trace.jsonl");

    let (exchanges, ours) = measure(|| extract(&path, &trace));
    eprintln!(
        "agentwire pcap (trace written, {} MB): {exchanges} exchanges, {}, {:.0} packets/s, peak RSS {} MB (before: {} MB); load average {}",
        std::fs::metadata(&trace).map_or(0, |m| m.len()) / 1_000_000,
        ours.rates(bytes),
        packets as f64 / ours.wall,
        peak_rss_kib() / 1024,
        rss_before / 1024,
        load_average()
    );
    for (label, extra) in [
        ("tshark --export-objects http", &[][..]),
        (
            "tshark --export-objects http, out-of-order reassembly on",
            &["-o", "tcp.reassemble_out_of_order:TRUE"][..],
        ),
    ] {
        match tshark(&path, dir.path(), extra) {
            Some((took, n)) => eprintln!(
                "{label}: {n} objects, {}; agentwire is {:.1}x faster (wall), {:.1}x per CPU-second",
                took.rates(bytes),
                took.wall / ours.wall,
                took.cpu / ours.cpu
            ),
            None => eprintln!("{label}: tshark not available, no comparison"),
        }
    }

    let mut g = c.benchmark_group("pcap");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function(format!("file_to_trace_{mb}MB"), |b| {
        b.iter(|| extract(&path, &trace))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
