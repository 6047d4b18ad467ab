//! Integration tests: one binary, shared helpers in `common` (and the Chromium and tshark
//! helpers beside it). One line per module says what it covers. Tests that need npm,
//! Chromium or tshark run like the others (`make test-deps` installs them).

// `analyze` on the shared Claude Code captures, cross-checked with tshark.
mod analyze;
// Hand-made traces for every prompt-cache miss cause.
mod analyze_cache;
mod analyze_costs;
// Codex jobs and polls (classic and code mode), hand-made Responses traces.
mod analyze_codex;
// One test per row of Anthropic's cache-invalidation table.
mod analyze_invalidation;
// The figures users act on, against values computed independently.
mod analyze_oracle;
// Hand-made traces for every poll kind and background-job lifecycle.
mod analyze_polls;
// `analyze`'s report formats: snapshots, the JSON schema, Parquet, gate exit codes.
mod analyze_report;
// Adversarial faults, one test per kind of bad input.
mod bad_input_kinds;
// Bounded expansion: blob references, gzip'd documents, relayed MCP answers.
mod bounds;
// `agentwire ca` and `serve --intercept --tunnel-others` through the binary.
mod ca_tunnel;
// Real Codex from npm: versions, models and routes diffed, polls analysed, transports compared.
mod chat_bad;
mod chat_server;
mod codex;
mod gemini;
mod gemini_bad;
// Shared helpers: the built binary, `TestServer`, the shared captures.
mod common;
// Helper: a headless Chromium driven over the DevTools protocol.
mod common_chromium;
// Helper: exchanges built from a pcap with tshark.
mod common_tshark;
// Shell completions and man pages generated from the clap definitions.
mod completions;
// CONNECT handling: a tunnel answered only once its connection is established.
mod connect;
// One content decoder and one SSE parser for every source and reader.
mod decode;
// `diff` on the real Claude Code captures.
mod diff;
// Snapshots of every `diff` report format, on hand-made requests.
mod diff_snapshots;
// A directory input read as its files, named one by one.
mod dir_inputs;
// The exit-code table: one row per command and situation, through the binary.
mod exit_codes;
// Cargo features: a build without live capture (libpcap).
mod features;
// Files agentwire deletes stay inside the directory it owns.
mod files;
// Fleet tables: `analyze DIR --parquet` over generated traces.
mod fleet;
// One Parquet table set over all four agents: agent, provider, dialect columns.
mod fleet_agents;
// HTTP framing at the server and the recording proxy.
mod framing;
// Builder of hand-made traces with blocks of exact sizes.
mod hand_trace;
// `history` over real published Claude Code versions (npm).
mod history;
// `history` of another agent (Codex), checked by the independent reader.
mod history_agents;
// Nothing hostile in a trace reaches the terminal on stdout.
mod hostile;
// House rules on the source itself: nothing under src/ prints but the diagnostics sink,
// and the binary adds no anyhow context (causes are embedded in the messages).
mod house;
// Importing Claude Code transcripts from real runs.
mod import;
// Importing Codex session files (rollouts): requests rebuilt, usage, every reading command.
mod import_codex;
// Inputs agentwire does not read, and how inputs are opened.
mod import_foreign;
// Every JSON type at every field of every import: no reader panics.
mod import_types;
// Imports of files written by the real tools (mitmproxy, claude-tap, claude-trace).
mod import_peers;
// The first-party route: TLS interception with agentwire's CA.
mod intercept;
// `serve --intercept generativelanguage.googleapis.com` with real Gemini CLI.
mod intercept_gemini;
// A run stopped by a signal removes its temporary output and ends by that signal.
mod interrupted;
// The server under stress: shutdown mid-stream, a full disk, bytes in flight, load.
mod limits;
// `matrix` recorded live from npm.
mod matrix;
// One matrix across Claude Code, Codex, Gemini CLI and opencode, rows checked per agent.
mod matrix_agents;
// Streamable HTTP MCP recording through agentwire's proxy.
mod mcp_http;
// Real Claude Code with the test MCP server.
mod mcp_live;
// Snapshots of the MCP reports.
mod mcp_report;
// `mcp-tap` against the real test MCP server, byte for byte.
mod mcp_tap;
// Issue 32's last round-3 kinds, each through the real binary.
mod hostile_round3;
// The `cargo fuzz` targets' properties, bounded, on stable.
mod fuzz_props;
// How `mcp-tap` stops (signals forwarded), loses records (said) and what it refuses.
mod mcp_tap_stop;
// The relay under arbitrary splits and interleavings: bytes out == bytes in.
mod mcp_tap_relay;
// The cold-cache download of a published CLI, integrity checked.
mod missing;
mod npm_integrity;
// Numbers read from a trace are range-checked.
mod numbers;
// One output policy for every writer.
mod opencode;
mod outputs;
// Output paths at the edges of the output policy.
mod outputs_edges;
// `pcap` on real captures, checked against tshark.
mod pcap;
// The trace of every shared capture, byte-identical to the reference.
mod pcap_identical;
// Other tools the tests run against, installed from their registries.
mod peers;
// `-` for standard input and output.
mod pipes;
// `prompt`: the system blocks and tool definitions of one request.
mod prompt;
// The recording proxy (`serve --upstream`).
mod proxy;
// `record` with real Claude Code binaries from npm.
mod record;
// Real recordings through the canonical view.
mod record_canon;
// Playback: a recorded session answers a new client (`serve --replay`).
mod replay;
// `agentwire replay TRACE --to URL`: the resend client through the binary.
mod replay_client;
// HTML reports loaded in a real headless Chromium.
mod report_html;
// Script injection through recorded text into the reports.
mod report_injection;
// The shareable Markdown and JSON reports: snapshots.
mod report_md;
// A large audit of a generated trace.
mod report_scale;
// The OpenAI Responses API over HTTP: stub, script, failures, replay, proxy.
mod responses;
// Bad input on the Responses WebSocket read back: mid-session chains, non-JSON, cut streams.
mod responses_bad;
// The Responses WebSocket: sessions, recording, refusal, cuts, replay, relay.
mod responses_ws;
// Secrets never reach disk or another host.
mod secrets;
// The unique key through every write path added since round 2: analyze, reports, export, mcp-tap.
mod secrets_sinks;
// The fake server over real loopback sockets.
mod server;
// PySpark over the fleet tables, and the Spark job running analyze on its workers.
mod spark;
// Two real sessions recorded by one server, told apart.
mod sessions;
// `show` on the shipped sample.
mod show;
// A hostile recorded name through every --fail-on gate and warning path: stderr stays clean.
mod stderr_escape;
// Request targets that would leave the upstream's base path: normalized once, refused.
mod targets;
// Terminal conventions: colour and progress only on a terminal, never with NO_COLOR.
mod terminal;
// `record --tty`: real Claude Code in a pseudo-terminal, its cast; sessions that hang or crash.
mod tty;
// `diff` of print mode against terminal mode, its figures checked by an independent reader.
mod tty_diff;
// `matrix --tty` and `history --tty`.
mod tty_matrix;
// Test input from the real captures without agentwire's pcap reader (tshark).
mod tshark;
// CLI specs resolved through the real npm registry.
mod versions;
// The conversation viewer in headless Chromium: the bg-build session, hostile text, live.
mod viewer;
// The viewer's batched index of a trace file against one built a line at a time.
mod viewer_index;
