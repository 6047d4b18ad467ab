//! Codex sessions analysed end to end: hand-written Responses traces (`POST /v1/responses`
//! request bodies whose `input` grows as a pure prefix, answered with SSE streams), shaped
//! like what Codex 0.165.0 / 0.171.0 sent to a fake server (the lab's measurements in
//! `docs/analyze.md`, "Codex"). Three scenarios, each a long command started, polled three
//! times while it runs, once more when it exits, and once after: classic mode
//! (`exec_command` + `write_stdin`), code mode with `wait` on a script cell, and code mode
//! with `tools.write_stdin` inside `exec` scripts.

use serde_json::{json, Value};

use agentwire::analyze::{analyze_exchanges, Analysis, AnalyzeConfig, UsageMode};
use agentwire::report::{analyze::render, Format};
use agentwire::trace::{Body, Exchange, HttpRequest, HttpResponse, Source, SourceKind};

use crate::common::repo;
use crate::hand_trace::at;

/// Seconds between two requests: Codex clamps an empty `write_stdin` to at least 5 s.
const STEP: f64 = 5.0;

/// The SSE stream of a response whose output is `items`.
fn sse(n: usize, items: &[Value]) -> Vec<u8> {
    let id = format!("resp_{n}");
    let mut events = vec![json!({"type": "response.created", "sequence_number": 0,
        "response": {"id": id, "status": "in_progress", "model": "gpt-5.5", "output": []}})];
    for (i, item) in items.iter().enumerate() {
        events.push(
            json!({"type": "response.output_item.done", "sequence_number": i + 1,
            "output_index": i, "item": item}),
        );
    }
    events.push(
        json!({"type": "response.completed", "sequence_number": items.len() + 1,
        "response": {"id": id, "status": "completed", "model": "gpt-5.5", "output": items,
            "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024},
                "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 1212}}}),
    );
    let mut out = String::new();
    for e in events {
        out.push_str(&format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap()
        ));
    }
    out.into_bytes()
}

/// One step of a session: the model's output items, and the output each call got (sent
/// with the next request).
type Step = (Vec<Value>, Vec<Value>);

/// The exchanges of a Codex session: request k at `k * STEP` s carries the developer and
/// user messages and every earlier step's items and outputs; its answer is step k's items.
fn session(steps: &[Step]) -> Vec<Exchange> {
    let mut input = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the long job and wait for it."}]}),
    ];
    let mut out = Vec::new();
    for (k, (items, outputs)) in steps.iter().enumerate() {
        let body = json!({"model": "gpt-5.5", "input": input, "tools": [
                {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
                {"type": "function", "name": "write_stdin", "parameters": {"type": "object"}},
                {"type": "function", "name": "wait", "parameters": {"type": "object"}},
                {"type": "custom", "name": "exec"}],
            "tool_choice": "auto", "parallel_tool_calls": false, "stream": true, "store": false,
            "prompt_cache_key": "0199a1b2-0000-7000-8000-000000000001"});
        out.push(exchange(
            k,
            serde_json::to_vec(&body).unwrap(),
            sse(k, items),
        ));
        input.extend(items.iter().cloned());
        input.extend(outputs.iter().cloned());
    }
    out
}

fn exchange(k: usize, body: Vec<u8>, answer: Vec<u8>) -> Exchange {
    let secs = k as f64 * STEP;
    Exchange {
        id: k as u64,
        started_at: at(secs),
        ended_at: Some(at(secs + 0.5)),
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/responses".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                (
                    "session-id".into(),
                    "0199a1b2-0000-7000-8000-000000000001".into(),
                ),
            ]
            .into(),
            body: Body::new(body),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), "text/event-stream".into())].into(),
            body: Body::new(answer),
            chunks: vec![],
            first_byte_at: None,
        }),
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

fn function_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{id}"), "status": "completed",
        "name": name, "arguments": arguments.to_string(), "call_id": id})
}

fn exec(id: &str, source: &str) -> Value {
    json!({"type": "custom_tool_call", "id": format!("ctc_{id}"), "status": "completed",
        "call_id": id, "name": "exec", "input": source})
}

fn output(id: &str, text: &str) -> Value {
    json!({"type": "function_call_output", "call_id": id, "output": text})
}

/// A code-mode output: its text parts.
fn parts(kind: &str, id: &str, texts: &[&str]) -> Value {
    let parts: Vec<Value> = texts
        .iter()
        .map(|t| json!({"type": "input_text", "text": t}))
        .collect();
    json!({"type": kind, "call_id": id, "output": parts})
}

fn last() -> Step {
    (
        vec![
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The job finished."}]}),
        ],
        vec![],
    )
}

/// The analysis of `xs`, whose JSON report the committed schema accepts, and whose
/// table and Markdown reports render.
fn analyze(xs: &[Exchange]) -> Analysis {
    let a = analyze_exchanges(
        xs,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            ..AnalyzeConfig::default()
        },
    );
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas/analyze.schema.json")).unwrap())
            .unwrap();
    let v: Value = serde_json::from_str(&render(&a, Format::Json)).unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .expect("schema compiles")
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    for f in [Format::Table, Format::Markdown] {
        let text = render(&a, f);
        assert!(text.contains("Poll episodes") && text.contains("Background jobs"));
    }
    a
}

/// `(event, call)` of each lifecycle event of job 0, as the JSON names them.
fn events(a: &Analysis) -> Vec<(String, String)> {
    let v = serde_json::to_value(&a.jobs[0]).unwrap();
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["call"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn kind(a: &Analysis) -> String {
    serde_json::to_value(a.jobs[0].job.kind)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn running(chunk: &str, wall: &str) -> String {
    format!("Chunk ID: {chunk}\nWall time: {wall} seconds\nProcess running with session ID 27907\nOriginal token count: 0\nOutput:\n")
}

/// Classic mode (`-m gpt-5.5`). Request 0's answer starts `sleep 20; echo done`; request
/// 1 carries "Process running with session ID 27907" (the job starts at 5 s); polls p1,
/// p2, p3 (issued by requests 1–3) see it running, p4 (request 4) sees "Process exited
/// with code 0", carried by request 5 (25 s: the job ran 20 s); p5 (request 5) gets
/// "Unknown process id 27907".
///
/// By hand: one job, `completed`, exit 0, 5 polls in one `task_output` episode on
/// `session:27907`. p2 and p3 repeat the previous "running" once the chunk id (`task-id`
/// rule) and the wall time (`duration`) are masked: 2 redundant. p4 differs (exited), p5
/// differs (unknown process) but was issued by request 5, which carried the exit: 1 poll
/// after exit. Polls 5 s apart: (25.5 − 5.5) / 4 = 5 s mean interval.
#[test]
fn classic_codex_write_stdin_polls_of_a_running_process() {
    let poll = |id: &str| {
        vec![function_call(
            id,
            "write_stdin",
            json!({"session_id": 27907, "chars": "", "yield_time_ms": 1000}),
        )]
    };
    let xs = session(&[
        (
            vec![function_call("c0", "exec_command", json!({"cmd": "sleep 20; echo done", "yield_time_ms": 500}))],
            vec![output("c0", &running("badcf1", "0.5013"))],
        ),
        (poll("p1"), vec![output("p1", &running("fb5270", "5.0008"))]),
        (poll("p2"), vec![output("p2", &running("67b72d", "5.0012"))]),
        (poll("p3"), vec![output("p3", &running("ac7964", "5.0012"))]),
        (
            poll("p4"),
            vec![output("p4", "Chunk ID: 31523e\nWall time: 4.2392 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\ndone\n")],
        ),
        (poll("p5"), vec![output("p5", "write_stdin failed: Unknown process id 27907")]),
        last(),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.inputs[0].messages_requests, 7);
    assert_eq!(a.jobs.len(), 1, "{:#?}", a.jobs);
    let j = &a.jobs[0].job;
    assert_eq!(kind(&a), "codex_exec_session");
    assert_eq!(
        (j.reference.as_str(), j.tool.as_str(), j.command.as_str()),
        ("session:27907", "exec_command", "sleep 20; echo done")
    );
    assert_eq!(
        (j.state.name(), j.exit_code, j.polls),
        ("completed", Some(0), 5)
    );
    assert_eq!(a.jobs[0].duration_s, Some(20.0));
    assert_eq!(
        events(&a),
        [
            ("started", "c0"),
            ("running", "p1"),
            ("running", "p2"),
            ("running", "p3"),
            ("exited", "p4"),
            ("not_found", "p5"),
        ]
        .map(|(e, c)| (e.to_string(), c.to_string()))
    );
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (
            e.kind.as_str(),
            e.tool.as_str(),
            e.target.as_str(),
            e.job.as_deref()
        ),
        (
            "task_output",
            "write_stdin",
            "session:27907",
            Some("session:27907")
        )
    );
    assert_eq!(e.calls, ["p1", "p2", "p3", "p4", "p5"]);
    assert_eq!(
        (e.polls, e.redundant, e.after_notified, e.while_pending),
        (5, 2, 1, 0)
    );
    let why: Vec<(&str, &[String])> = e
        .redundant_calls
        .iter()
        .map(|r| (r.call.as_str(), r.equal_by.as_slice()))
        .collect();
    let rules = ["duration".to_string(), "task-id".to_string()];
    assert_eq!(why, [("p2", &rules[..]), ("p3", &rules[..])]);
    assert_eq!(e.mean_interval_s, Some(5.0));
    assert_eq!(
        (
            a.summary.polls,
            a.summary.redundant_polls,
            a.summary.polls_after_notified
        ),
        (5, 2, 1)
    );
    let d = &a.decisions[0];
    assert_eq!(
        (d.acceptance_result.as_str(), d.decision.as_str()),
        ("pass", "keep")
    );
}

fn cell_running(wall: &str) -> String {
    format!("Script running with cell ID 1\nWall time {wall} seconds\nOutput:\n")
}

/// Code mode (the default model). Request 0's answer is an `exec` script running
/// `sleep 6; echo done` that outlives its 1 s yield: "Script running with cell ID 1"
/// (carried by request 1, 5 s). `wait` w1–w3 see it running; w4 gets "Script completed"
/// with the command's JSON part (`exit_code` 0), carried by request 5 (25 s); w5, issued
/// by request 5, gets "exec cell 1 not found".
///
/// By hand: one `codex_exec_cell` job `cell:1`, completed, exit 0, 20 s; one
/// `task_output` episode of 5 polls; w2 repeats w1 byte for byte (`identical`), w3
/// differs from w2 only in the wall time (`duration`): 2 redundant; w5 after the end: 1.
#[test]
fn code_mode_wait_polls_of_a_running_script_cell() {
    let wait = |id: &str| {
        vec![function_call(
            id,
            "wait",
            json!({"cell_id": "1", "yield_time_ms": 1500}),
        )]
    };
    let xs = session(&[
        (
            vec![exec("c0", "// @exec: {\"yield_time_ms\": 1000}\nconst r = await tools.exec_command({cmd: \"sleep 6; echo done\", yield_time_ms: 10000});\ntext(r);")],
            vec![json!({"type": "custom_tool_call_output", "call_id": "c0", "output": cell_running("1.0")})],
        ),
        (wait("w1"), vec![output("w1", &cell_running("1.5"))]),
        (wait("w2"), vec![output("w2", &cell_running("1.5"))]),
        (wait("w3"), vec![output("w3", &cell_running("1.6"))]),
        (
            wait("w4"),
            vec![parts("function_call_output", "w4", &["Script completed\nWall time 0.4 seconds\nOutput:\n", "{\"chunk_id\":\"9302e2\",\"wall_time_seconds\":5.945922994,\"exit_code\":0,\"original_token_count\":2,\"output\":\"done\\n\"}"])],
        ),
        (
            wait("w5"),
            vec![parts("function_call_output", "w5", &["Script failed\nWall time 0.0 seconds\nOutput:\n", "Script error:\nexec cell 1 not found"])],
        ),
        last(),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.jobs.len(), 1, "{:#?}", a.jobs);
    let j = &a.jobs[0].job;
    assert_eq!(kind(&a), "codex_exec_cell");
    assert_eq!((j.reference.as_str(), j.tool.as_str()), ("cell:1", "exec"));
    assert_eq!(
        (j.state.name(), j.exit_code, j.polls),
        ("completed", Some(0), 5)
    );
    assert_eq!(a.jobs[0].duration_s, Some(20.0));
    let ev: Vec<String> = events(&a).into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        ev,
        [
            "started",
            "running",
            "running",
            "running",
            "completed",
            "not_found"
        ]
    );
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (
            e.kind.as_str(),
            e.tool.as_str(),
            e.target.as_str(),
            e.job.as_deref()
        ),
        ("task_output", "wait", "cell:1", Some("cell:1"))
    );
    assert_eq!((e.polls, e.redundant, e.after_notified), (5, 2, 1));
    assert_eq!(e.redundant_calls[0].equal_by, ["identical"]);
    assert_eq!(e.redundant_calls[1].equal_by, ["duration"]);
    assert_eq!(
        (
            a.decisions[0].acceptance_result.as_str(),
            a.decisions[0].decision.as_str()
        ),
        ("pass", "keep")
    );
}

fn js_poll(id: &str) -> Vec<Value> {
    vec![exec(
        id,
        "const r = await tools.write_stdin({session_id: 81003, chars: \"\", yield_time_ms: 1000});\ntext(r);",
    )]
}

fn js_answer(id: &str, json_part: &str) -> Vec<Value> {
    vec![parts(
        "custom_tool_call_output",
        id,
        &[
            "Script completed\nWall time 5.0 seconds\nOutput:\n",
            json_part,
        ],
    )]
}

/// Code mode, the process polled from scripts. Request 0's script runs `tools.exec_command`
/// and answers with a JSON part holding `session_id` 81003 and no `exit_code` (the
/// process runs on); scripts s1–s3 call `tools.write_stdin({session_id: 81003, chars:
/// ""})` and see it running (JSON parts differing in `chunk_id` and `wall_time_seconds`),
/// s4 sees `exit_code` 1, s5 gets "write_stdin failed: Unknown process id 81003".
///
/// By hand: one `codex_exec_session` job `session:81003` running `make test`, failed
/// (exit 1); 5 polls, s2 and s3 redundant (`chunk-id`, `wall-time`), s5 after the exit.
/// The decision: fail, investigate (the exit code).
#[test]
fn code_mode_write_stdin_inside_exec_scripts_polls_a_process() {
    let run = |chunk: &str, wall: &str| {
        format!("{{\"chunk_id\":\"{chunk}\",\"wall_time_seconds\":{wall},\"session_id\":81003,\"original_token_count\":0,\"output\":\"\"}}")
    };
    let (r0, r1, r2, r3) = (
        run("f0ca53", "0.50"),
        run("bb59da", "5.0017"),
        run("c1d2e3", "5.0009"),
        run("a1b2c3", "5.0021"),
    );
    let xs = session(&[
        (
            vec![exec("c0", "const r = await tools.exec_command({cmd: \"make test\", yield_time_ms: 500});\ntext(r);")],
            js_answer("c0", &r0),
        ),
        (js_poll("s1"), js_answer("s1", &r1)),
        (js_poll("s2"), js_answer("s2", &r2)),
        (js_poll("s3"), js_answer("s3", &r3)),
        (
            js_poll("s4"),
            js_answer("s4", "{\"chunk_id\":\"a75d1e\",\"wall_time_seconds\":0.27,\"exit_code\":1,\"original_token_count\":2,\"output\":\"FAIL\\n\"}"),
        ),
        (
            js_poll("s5"),
            vec![parts("custom_tool_call_output", "s5", &["Script failed\nWall time 0.0 seconds\nOutput:\n", "Script error:\nwrite_stdin failed: Unknown process id 81003"])],
        ),
        last(),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.jobs.len(), 1, "{:#?}", a.jobs);
    let j = &a.jobs[0].job;
    assert_eq!(kind(&a), "codex_exec_session");
    assert_eq!(
        (j.reference.as_str(), j.tool.as_str(), j.command.as_str()),
        ("session:81003", "exec", "make test")
    );
    assert_eq!(
        (j.state.name(), j.exit_code, j.polls),
        ("failed", Some(1), 5)
    );
    let ev: Vec<String> = events(&a).into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        ev,
        [
            "started",
            "running",
            "running",
            "running",
            "exited",
            "not_found"
        ]
    );
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.tool.as_str(), e.target.as_str()),
        ("task_output", "exec", "session:81003")
    );
    assert_eq!((e.polls, e.redundant, e.after_notified), (5, 2, 1));
    assert_eq!(e.redundant_calls[0].equal_by, ["chunk-id", "wall-time"]);
    assert_eq!(
        (
            a.decisions[0].acceptance_result.as_str(),
            a.decisions[0].decision.as_str()
        ),
        ("fail", "investigate")
    );
}

/// The repetition rule in a Codex session: `gh run view 7 --json status` run four times
/// with `exec_command`, the same answer each time (the process exits at once, so no job):
/// one `same_call` episode of 4 polls, 3 redundant. Twice would be work.
#[test]
fn a_codex_command_repeated_with_the_same_answer_is_a_poll() {
    let gh = |id: &str| {
        vec![function_call(
            id,
            "exec_command",
            json!({"cmd": "gh run view 7 --json status", "yield_time_ms": 10000}),
        )]
    };
    let answer = |id: &str, chunk: &str| {
        vec![output(id, &format!("Chunk ID: {chunk}\nWall time: 0.8 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\n{{\"status\":\"in_progress\"}}\n"))]
    };
    let steps = [
        (gh("g1"), answer("g1", "aaaaa1")),
        (gh("g2"), answer("g2", "aaaaa2")),
        (gh("g3"), answer("g3", "aaaaa3")),
        (gh("g4"), answer("g4", "aaaaa4")),
        last(),
    ];
    let a = analyze(&session(&steps));
    assert!(a.jobs.is_empty());
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.target.as_str(), e.polls, e.redundant),
        (
            "same_call",
            "exec_command(gh run view 7 --json status)",
            4,
            3
        )
    );
    let two = [steps[0].clone(), steps[1].clone(), last()];
    assert!(analyze(&session(&two)).episodes.is_empty());
}
