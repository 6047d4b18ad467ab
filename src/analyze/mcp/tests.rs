//! Hand-built sessions with every figure worked out by hand: a 2026-07-28 protocol task
//! polled on both layers and ended by a notification, and a model whose status polls
//! match the task only by arguments.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::analyze;
use crate::analyze::events::{Notification, ToolCall, ToolResult};
use crate::trace::mcp::{McpDirection, McpTransport};
use crate::trace::McpRecord;

fn t0() -> DateTime<Utc> {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

fn at(ms: i64) -> DateTime<Utc> {
    t0() + Duration::milliseconds(ms)
}

fn rec(ms: i64, dir: McpDirection, msg: Value) -> (usize, McpRecord) {
    let mut r = McpRecord::message(
        "jobs",
        McpTransport::Stdio,
        dir,
        msg.to_string().as_bytes(),
        false,
    );
    r.at = at(ms);
    (0, r)
}

fn req(ms: i64, id: u64, method: &str, params: Value) -> (usize, McpRecord) {
    rec(
        ms,
        McpDirection::ToServer,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
}

fn res(ms: i64, id: u64, result: Value) -> (usize, McpRecord) {
    rec(
        ms,
        McpDirection::ToClient,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn model_call(
    id: &str,
    name: &str,
    input: Value,
    issued: i64,
    result: Option<(i64, &str, bool)>,
) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        input,
        session: 0,
        thread: 0,
        issued_by: 0,
        issued_at: at(issued),
        result: result.map(|(ms, text, is_error)| ToolResult {
            text: text.into(),
            hash: 0,
            is_error,
            carried_by: 1,
            at: at(ms),
        }),
    }
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}], "resultType": "complete"})
}

/// A CLI that backgrounds: the build becomes task T (poll interval 1000 ms); the CLI
/// hands the model "started" at 100 ms; it polls `tasks/get` at 300 (too fast: 250 ms
/// after creation), 1500 and 3000 ms; the server notifies completion at 2500 ms, so the
/// 3000 ms poll is after the end. The model polls `get_status(T)` at 1200 (working) and
/// 2800 ms (after the end: redundant), and a `<task-notification>` for the build reaches it.
#[test]
fn protocol_task_followed_on_both_layers() {
    let meta = |tu: &str| json!({"claudecode/toolUseId": tu});
    let records = vec![
        req(
            0,
            1,
            "tools/call",
            json!({"name": "slow_build", "arguments": {"target": "app"}, "_meta": meta("toolu_b")}),
        ),
        res(
            50,
            1,
            json!({"resultType": "task", "taskId": "T", "status": "working", "pollIntervalMs": 1000}),
        ),
        req(300, 2, "tasks/get", json!({"taskId": "T"})),
        res(
            310,
            2,
            json!({"taskId": "T", "status": "working", "resultType": "complete"}),
        ),
        req(
            1200,
            3,
            "tools/call",
            json!({"name": "get_status", "arguments": {"job_id": "T"}, "_meta": meta("toolu_p1")}),
        ),
        res(1210, 3, text("job T: working")),
        req(1500, 4, "tasks/get", json!({"taskId": "T"})),
        res(
            1510,
            4,
            json!({"taskId": "T", "status": "working", "resultType": "complete"}),
        ),
        rec(
            2500,
            McpDirection::ToClient,
            json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": {"taskId": "T", "status": "completed"}}),
        ),
        req(
            2800,
            5,
            "tools/call",
            json!({"name": "get_status", "arguments": {"job_id": "T"}, "_meta": meta("toolu_p2")}),
        ),
        res(2810, 5, text("job T: completed")),
        req(3000, 6, "tasks/get", json!({"taskId": "T"})),
        res(
            3010,
            6,
            json!({"taskId": "T", "status": "completed", "resultType": "complete"}),
        ),
    ];
    let calls = [
        model_call(
            "toolu_b",
            "mcp__jobs__slow_build",
            json!({"target": "app"}),
            0,
            Some((100, "started T", false)),
        ),
        model_call(
            "toolu_p1",
            "mcp__jobs__get_status",
            json!({"job_id": "T"}),
            1190,
            Some((1300, "job T: working", false)),
        ),
        model_call(
            "toolu_p2",
            "mcp__jobs__get_status",
            json!({"job_id": "T"}),
            2790,
            Some((2900, "job T: completed", false)),
        ),
    ];
    let model: Vec<(usize, &ToolCall)> = calls.iter().map(|c| (0, c)).collect();
    let notes = vec![Notification {
        task_id: "T".into(),
        tool_use_id: Some("toolu_b".into()),
        status: "completed".into(),
        exit_code: None,
        output_file: None,
        summary: None,
        thread: 0,
        carried_by: 3,
        at: at(2600),
    }];
    let a = analyze(&records, &model, &notes, &["main".to_string()]);
    assert_eq!(a.tasks.len(), 1);
    let t = &a.tasks[0];
    assert_eq!(
        (t.task_id.as_str(), t.kind, t.tool.as_str()),
        ("T", "protocol", "slow_build")
    );
    assert_eq!(t.states, ["working", "completed"]);
    assert_eq!(t.duration_ms, Some(2500));
    assert_eq!(t.poll_interval_ms, Some(1000));
    assert_eq!(
        (t.tasks_get, t.polls_too_fast, t.polls_after_terminal),
        (3, 1, 1)
    );
    assert_eq!(t.notifications, 1);
    assert_eq!((t.model_polls, t.model_redundant_polls), (2, 1));
    assert!(t.backgrounded);
    assert_eq!(t.result_via, "notification");
    assert_eq!(t.started_by.as_deref(), Some("toolu_b"));
    let roles: Vec<(&str, Option<&str>, Option<&str>)> = a
        .links
        .iter()
        .map(|l| (l.role, l.task_id.as_deref(), l.linked_by))
        .collect();
    assert_eq!(
        roles,
        [
            ("start", Some("T"), Some("tool_use_id")),
            ("status_poll", Some("T"), Some("tool_use_id")),
            ("status_poll", Some("T"), Some("tool_use_id"))
        ]
    );
    let s = &a.summary;
    assert_eq!(
        (
            s.requests,
            s.unanswered,
            s.protocol_tasks,
            s.backgrounded,
            s.notified
        ),
        (6, 0, 1, 1, 1)
    );
    let get = a.methods.iter().find(|m| m.method == "tasks/get").unwrap();
    assert_eq!(
        (get.calls, get.p50_ms, get.max_ms),
        (3, Some(10.0), Some(10.0))
    );
    assert_eq!(
        a.servers[0].protocol_version, None,
        "no handshake and no _meta version"
    );
}

/// Without Claude Code's `_meta`, calls are matched by tool name and equal arguments; a
/// job id from a blocking call's result is polled by another tool after the job ended.
#[test]
fn tool_job_linked_by_arguments_and_polls_after_the_end_are_redundant() {
    let records = vec![
        req(
            0,
            1,
            "tools/call",
            json!({"name": "slow_build", "arguments": {"target": "app"}}),
        ),
        res(3000, 1, text("build of app finished: ok (job job-7)")),
        req(
            3100,
            2,
            "tools/call",
            json!({"name": "get_status", "arguments": {"job_id": "job-7"}}),
        ),
        res(3105, 2, text("job job-7: completed")),
    ];
    let calls = [
        model_call(
            "toolu_1",
            "mcp__jobs__slow_build",
            json!({"target": "app"}),
            0,
            Some((3050, "build of app finished: ok (job job-7)", false)),
        ),
        model_call(
            "toolu_2",
            "mcp__jobs__get_status",
            json!({"job_id": "job-7"}),
            3090,
            Some((3200, "job job-7: completed", false)),
        ),
        // A call of another server's tool is not linked.
        model_call("toolu_3", "mcp__other__x", json!({}), 3300, None),
    ];
    let model: Vec<(usize, &ToolCall)> = calls.iter().map(|c| (0, c)).collect();
    let a = analyze(&records, &model, &[], &["main".to_string()]);
    let t = &a.tasks[0];
    assert_eq!((t.task_id.as_str(), t.kind), ("job-7", "tool_job"));
    assert_eq!(t.states, ["completed"]);
    assert_eq!(
        (t.model_polls, t.model_redundant_polls, t.tasks_get),
        (1, 1, 0)
    );
    assert!(!t.backgrounded);
    assert_eq!(t.result_via, "tool_result");
    assert_eq!(a.links[0].linked_by, Some("arguments"));
    assert_eq!(a.links[1].role, "status_poll");
    assert_eq!(a.links[2].linked_by, None);
    assert_eq!((a.summary.linked_calls, a.summary.unlinked_calls), (2, 1));
}

/// Issue 31 item 3, "MCP cancellation": a request the client cancelled with
/// `notifications/cancelled` was reported as never answered, and a reply after the cancel
/// as an ordinary reply. Four `tools/call`: 1 cancelled at 500 ms and never answered; 2
/// cancelled at 600 ms and answered at 900 ms anyway; 3 neither answered nor cancelled;
/// 4 answered at 200 ms (latency 100 ms, the only one measured).
#[test]
fn cancelled_answered_after_cancel_and_never_answered_are_three_outcomes() {
    let cancel = |ms: i64, id: u64| {
        rec(
            ms,
            McpDirection::ToServer,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "user interrupted"}}),
        )
    };
    let call = json!({"name": "get_status", "arguments": {"job_id": "j"}});
    let records = vec![
        req(100, 1, "tools/call", call.clone()),
        req(100, 2, "tools/call", call.clone()),
        req(100, 3, "tools/call", call.clone()),
        req(100, 4, "tools/call", call),
        res(200, 4, text("ok")),
        cancel(500, 1),
        cancel(600, 2),
        res(900, 2, text("late")),
    ];
    let a = analyze(&records, &[], &[], &["main".to_string()]);
    let s = &a.summary;
    assert_eq!(
        (
            s.requests,
            s.errors,
            s.unanswered,
            s.cancelled,
            s.answered_after_cancel
        ),
        (4, 0, 1, 1, 1)
    );
    let m = &a.methods[0];
    assert_eq!((m.calls, m.p50_ms, m.max_ms), (4, Some(100.0), Some(100.0)));
}
