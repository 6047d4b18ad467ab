//! Tests of the Codex readers: which calls start, poll or ask about a process or cell,
//! and a lifecycle followed from start to end and past it.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::lifecycle::{follow, Outcome};
use super::*;
use crate::analyze::events::{JobEventKind, ToolResult};

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

/// A call issued by request `seq` whose result (if any) request `seq + 1` carries.
fn call(id: &str, name: &str, input: Value, seq: usize, result: Option<&str>) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        input,
        session: 0,
        thread: 0,
        issued_by: seq,
        issued_at: at(seq as i64 * 10),
        result: result.map(|t| ToolResult {
            text: t.into(),
            hash: 0,
            is_error: false,
            carried_by: seq + 1,
            at: at(seq as i64 * 10 + 10),
        }),
    }
}

fn js(id: &str, source: &str, seq: usize, result: Option<&str>) -> ToolCall {
    call(id, "exec", Value::String(source.into()), seq, result)
}

const RUNNING: &str = "Chunk ID: badcf1\nWall time: 0.5013 seconds\nProcess running with session ID 27907\nOriginal token count: 0\nOutput:\n";

#[test]
fn starts_polls_and_questions_in_classic_mode() {
    let s = |n: &str| Some(Handle::Session(n.into()));
    let start = call(
        "e",
        "exec_command",
        json!({"cmd": "sleep 20; echo done", "yield_time_ms": 500}),
        0,
        Some(RUNNING),
    );
    assert_eq!(started(&start), s("27907"));
    assert_eq!(command(&start, &s("27907").unwrap()), "sleep 20; echo done");
    // A short command that exited before returning started nothing.
    let quick = call(
        "q",
        "exec_command",
        json!({"cmd": "ls"}),
        0,
        Some("Process exited with code 0\nOutput:\na\n"),
    );
    assert_eq!(started(&quick), None);

    let poll = call(
        "p",
        "write_stdin",
        json!({"session_id": 27907, "chars": "", "yield_time_ms": 1000}),
        1,
        None,
    );
    assert_eq!((poll_of(&poll), refers_to(&poll)), (s("27907"), s("27907")));
    let typing = call(
        "t",
        "write_stdin",
        json!({"session_id": 27907, "chars": "y\n"}),
        1,
        None,
    );
    assert_eq!((poll_of(&typing), refers_to(&typing)), (None, s("27907")));
}

#[test]
fn starts_and_polls_in_code_mode() {
    let s = |n: &str| Some(Handle::Session(n.into()));
    let cell = js("c", "// @exec: {\"yield_time_ms\": 1000}\nconst r = await tools.exec_command({cmd: \"sleep 6; echo done\", yield_time_ms: 10000});\ntext(r);", 0, Some("Script running with cell ID 1\nWall time 1.0 seconds\nOutput:\n"));
    assert_eq!(started(&cell), Some(Handle::Cell("1".into())));
    let wait = call(
        "w",
        "wait",
        json!({"cell_id": "1", "yield_time_ms": 1500}),
        1,
        None,
    );
    assert_eq!(poll_of(&wait), Some(Handle::Cell("1".into())));

    // Code mode: a script that started a process, then scripts that poll it.
    let bg = js("b", "const r = await tools.exec_command({cmd: \"make\", yield_time_ms: 500});\ntext(r);", 0, Some("Script completed\nWall time 0.7 seconds\nOutput:\n\n{\"chunk_id\":\"f0ca53\",\"session_id\":81003,\"output\":\"\"}"));
    assert_eq!(started(&bg), s("81003"));
    assert_eq!(command(&bg, &s("81003").unwrap()), "make");
    let js_poll = js("j", "const r = await tools.write_stdin({session_id: 81003, chars: \"\", yield_time_ms: 1000});\ntext(r);", 1, Some("Script completed\nOutput:\n\n{\"chunk_id\":\"bb59da\",\"session_id\":81003,\"output\":\"\"}"));
    assert_eq!(
        (poll_of(&js_poll), started(&js_poll)),
        (s("81003"), None),
        "a poll is no start"
    );
    let js_typing = js(
        "k",
        "await tools.write_stdin({session_id: 81003, chars: \"q\"});",
        1,
        None,
    );
    assert_eq!(
        (poll_of(&js_typing), refers_to(&js_typing)),
        (None, s("81003"))
    );
    let two = js("m", "await tools.write_stdin({session_id: 1, chars: \"\"}); await tools.write_stdin({session_id: 2, chars: \"\"});", 1, None);
    assert_eq!(refers_to(&two), None, "two processes: neither");
    // Other tools are none of these.
    assert_eq!(
        poll_of(&call("x", "mcp__s__wait", json!({"id": 1}), 1, None)),
        None
    );
    assert!(!is_codex_tool(&call(
        "x",
        "Bash",
        json!({"command": "ls"}),
        1,
        None
    )));
}

#[test]
fn volatile_values_of_code_mode_answers_are_masked() {
    let (a, fired) = comparable("Script completed\n{\"chunk_id\":\"bb59da\",\"wall_time_seconds\":5.001759799,\"session_id\":81003}");
    assert_eq!(
        a,
        "Script completed\n{\"chunk_id\":\"<id>\",\"wall_time_seconds\":<s>,\"session_id\":81003}"
    );
    assert_eq!(fired, ["chunk-id", "wall-time"]);
    assert_eq!(comparable("plain").1, Vec::<&str>::new());
    assert_eq!(
        source_query("// @exec: {\"yield_time_ms\": 1}\nconst r =  1;\ntext(r);"),
        "const r = 1; text(r);"
    );
}

/// exec_command (request 0) → write_stdin running (1), running (2), exited with code 3
/// (3), unknown process (4): five events; the end is the exit, carried by request 4 at
/// 40 s, failed (code 3); the not-found answer after it is an event, not a second end.
#[test]
fn a_process_is_followed_to_its_exit_and_past_it() {
    let start = call(
        "e",
        "exec_command",
        json!({"cmd": "make test"}),
        0,
        Some(RUNNING),
    );
    let poll = |id: &str, seq: usize, text: &str| {
        call(
            id,
            "write_stdin",
            json!({"session_id": 27907, "chars": ""}),
            seq,
            Some(text),
        )
    };
    let calls = [
        start.clone(),
        poll("p1", 1, RUNNING),
        call(
            "other",
            "write_stdin",
            json!({"session_id": 5, "chars": ""}),
            1,
            Some("write_stdin failed: Unknown process id 5"),
        ),
        poll("p2", 2, RUNNING),
        poll(
            "p3",
            3,
            "Chunk ID: 1\nProcess exited with code 3\nOutput:\nFAIL\n",
        ),
        poll("p4", 4, "write_stdin failed: Unknown process id 27907"),
    ];
    let life = follow(&Handle::Session("27907".into()), &start, &calls);
    let kinds: Vec<(JobEventKind, &str)> = life
        .events
        .iter()
        .map(|e| (e.event, e.call.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (JobEventKind::Started, "e"),
            (JobEventKind::Running, "p1"),
            (JobEventKind::Running, "p2"),
            (JobEventKind::Exited, "p3"),
            (JobEventKind::NotFound, "p4"),
        ]
    );
    assert_eq!(life.events[3].detail, "Process exited with code 3");
    assert_eq!(life.events[3].exit_code, Some(3));
    assert_eq!(
        life.events[4].detail,
        "write_stdin failed: Unknown process id 27907"
    );
    let end = life.end.unwrap();
    assert_eq!(
        (end.outcome, end.exit_code, end.seq, end.at),
        (Outcome::Failed, Some(3), 4, at(40))
    );
}

/// Found gone with no exit seen: ended, how unknown.
#[test]
fn a_process_found_gone_without_an_exit_ended_unknown() {
    let start = call(
        "e",
        "exec_command",
        json!({"cmd": "make test"}),
        0,
        Some(RUNNING),
    );
    let gone = "write_stdin failed: Unknown process id 27907";
    let calls = [
        start.clone(),
        call(
            "p9",
            "write_stdin",
            json!({"session_id": 27907, "chars": ""}),
            1,
            Some(gone),
        ),
    ];
    let end = follow(&Handle::Session("27907".into()), &start, &calls)
        .end
        .unwrap();
    assert_eq!((end.outcome, end.exit_code), (Outcome::Unknown, None));
}
