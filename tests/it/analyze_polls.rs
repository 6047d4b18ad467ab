//! Hand-made traces for every poll kind and job lifecycle: MCP status polling
//! (same_call), task output reads (task_output) with a notification that arrives with a
//! poll's result and a poll after it, inspect-only shell polling (shell_inspect) with a
//! duplicate start and no notification.

use serde_json::{json, Value};

use agentwire::analyze::{analyze_exchanges, Analysis, AnalyzeConfig, UsageMode};

use crate::hand_trace::{text, tool, tool_result, tool_use, Conv, TraceBuilder};

/// One step: the reply blocks, the `(tool_use_id, result text)` pairs the next request
/// carries, and optional extra user text (a notification).
pub type Step<'a> = (Vec<Value>, Vec<(&'a str, &'a str)>, Option<&'a str>);

/// Run a scripted session: `steps[k]` is the reply to request k; the result of each tool
/// call in reply k is `results[k]` (plus optional extra user text), sent with request k+1.
pub fn session(steps: &[Step<'_>]) -> Vec<agentwire::trace::Exchange> {
    let mut c = Conv::new("claude-sonnet-4-5");
    c.tools = vec![tool("Bash", 400), tool("Read", 400)];
    // A cacheable system prompt: 4400 bytes = 1100 tokens ≥ the 1024 minimum.
    c.system = vec![crate::hand_trace::cc(text(4400, 's'), None)];
    c.user(vec![text(100, 'g')]);
    let mut b = TraceBuilder::default();
    for (k, (reply, results, extra)) in steps.iter().enumerate() {
        b.send(
            &c,
            k as f64 * 10.0,
            reply.clone(),
            json!({"input_tokens": 1, "output_tokens": 1}),
        );
        c.assistant(reply.clone());
        let mut blocks: Vec<Value> = results
            .iter()
            .map(|(id, t)| tool_result(id, t, false))
            .collect();
        if let Some(x) = extra {
            blocks.push(json!({"type":"text","text": x}));
        }
        if !blocks.is_empty() {
            c.user(blocks);
        }
    }
    b.exchanges
}

fn analyze(xs: &[agentwire::trace::Exchange]) -> Analysis {
    analyze_exchanges(
        xs,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            ..AnalyzeConfig::default()
        },
    )
}

fn status(s: &str) -> String {
    format!(r#"{{"job_id": "j1", "status": "{s}"}}"#)
}

#[test]
fn mcp_status_polls_redundant_and_after_completion() {
    let get = |id: &str| {
        vec![tool_use(
            id,
            "mcp__jobs__get_status",
            json!({"job_id": "j1"}),
        )]
    };
    let (run, fin) = (
        status("running"),
        r#"{"job_id": "j1", "status": "finished", "artifact": "/out/a.txt"}"#,
    );
    let xs = session(&[
        (
            vec![tool_use(
                "s0",
                "mcp__jobs__start_job",
                json!({"name": "build"}),
            )],
            vec![("s0", r#"{"job_id": "j1", "status": "accepted"}"#)],
            None,
        ),
        (get("p1"), vec![("p1", &run)], None),
        (get("p2"), vec![("p2", &run)], None),
        (get("p3"), vec![("p3", fin)], None),
        (get("p4"), vec![("p4", fin)], None),
        (vec![json!({"type":"text","text":"done"})], vec![], None),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.episodes.len(), 1);
    let e = &a.episodes[0];
    // p2 repeats p1's `running`, p4 repeats p3's `finished`; p4 came after p3 reported it.
    assert_eq!(
        (e.kind.as_str(), e.polls, e.redundant, e.after_notified),
        ("same_call", 4, 2, 1)
    );
    assert_eq!(e.calls, ["p1", "p2", "p3", "p4"]);
    assert_eq!(e.job.as_deref(), Some("j1"));
    // Polls are 10 s apart.
    assert_eq!(e.mean_interval_s, Some(10.0));
    // Each poll triggered the next request; the redundant ones triggered requests 3 and 5.
    let tok = |i: usize| a.requests[i].tokens.input() + a.requests[i].tokens.output;
    assert_eq!(e.wasted_tokens, tok(3) + tok(5));
    assert_eq!(a.summary.poll_tokens, tok(2) + tok(3) + tok(4) + tok(5));
    assert!(
        (e.wasted_cost_usd - (a.requests[3].cost_usd.unwrap() + a.requests[5].cost_usd.unwrap()))
            .abs()
            < 1e-12
    );
    let j = &a.jobs[0];
    assert_eq!(
        (
            j.job.reference.as_str(),
            j.job.state.name(),
            j.job.artifact.as_deref()
        ),
        ("j1", "completed", Some("/out/a.txt"))
    );
    // Started when request 1 carried the start result (10 s), finished at request 4 (40 s).
    assert_eq!(j.duration_s, Some(30.0));
    let d = &a.decisions[0];
    assert_eq!(
        (d.acceptance_result.as_str(), d.decision.as_str()),
        ("pass", "keep")
    );
}

const NOTE: &str = "<task-notification>\n<task-id>t1</task-id>\n<tool-use-id>b0</tool-use-id>\n<output-file>/tmp/x/t1.output</output-file>\n<status>failed</status>\n<exit-code>2</exit-code>\n<summary>failed</summary>\n</task-notification>";

#[test]
fn task_output_polls_with_pending_notification_and_poll_after_it() {
    let bg = json!({"command": "make test", "run_in_background": true});
    let xs = session(&[
        (vec![tool_use("b0", "Bash", bg)], vec![("b0", "Command running in background with ID: t1. Output is being written to: /tmp/x/t1.output. You will be notified.")], None),
        (vec![tool_use("r1", "Read", json!({"file_path": "/tmp/x/t1.output"}))], vec![("r1", "building")], None),
        (vec![tool_use("o1", "BashOutput", json!({"bash_id": "t1"}))], vec![("o1", "building")], None),
        (vec![tool_use("c1", "Bash", json!({"command": "sleep 5; cat /tmp/x/t1.output"}))], vec![("c1", "building\ndone")], Some(NOTE)),
        (vec![tool_use("o2", "BashOutput", json!({"bash_id": "t1"}))], vec![("o2", "building  done")], None),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.target.as_str()),
        ("task_output", "task:t1")
    );
    // o1 repeats r1; o2 repeats c1 after whitespace normalization.
    assert_eq!((e.polls, e.redundant), (4, 2));
    // c1's result reached the model together with the notification; o2 came after it.
    assert_eq!((e.while_pending, e.after_notified), (1, 1));
    let j = &a.jobs[0].job;
    assert_eq!(
        (j.reference.as_str(), j.state.name(), j.exit_code, j.polls),
        ("t1", "failed", Some(2), 4)
    );
    let d = &a.decisions[0];
    assert_eq!(
        (
            d.acceptance_result.as_str(),
            d.decision.as_str(),
            d.artifact_reference.as_deref()
        ),
        ("fail", "investigate", Some("/tmp/x/t1.output"))
    );
    assert_eq!(
        (
            a.summary.polls_while_pending,
            a.summary.polls_after_notified
        ),
        (1, 1)
    );
}

#[test]
fn shell_inspect_polls_duplicate_start_and_no_notification() {
    let bg = json!({"command": "./long.sh", "run_in_background": true});
    let started = |id: &str| {
        format!("Command running in background with ID: {id}. Output is being written to: /tmp/y/{id}.output.")
    };
    let (s1, s2) = (started("j1"), started("j2"));
    let xs = session(&[
        (
            vec![tool_use("b0", "Bash", bg.clone())],
            vec![("b0", &s1)],
            None,
        ),
        (
            vec![tool_use(
                "k1",
                "Bash",
                json!({"command": "tail -n 1 app.log"}),
            )],
            vec![("k1", "step 1")],
            None,
        ),
        (
            vec![tool_use(
                "k2",
                "Bash",
                json!({"command": "sleep 2; tail -n 1 app.log"}),
            )],
            vec![("k2", "step 1")],
            None,
        ),
        (vec![tool_use("b1", "Bash", bg)], vec![("b1", &s2)], None),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.episodes.len(), 1);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.target.as_str(), e.polls, e.redundant),
        ("shell_inspect", "app.log", 2, 1)
    );
    assert_eq!(e.job.as_deref(), Some("j1"));
    assert_eq!(a.jobs.len(), 2);
    assert_eq!(a.jobs[0].job.state.name(), "no_notification");
    assert_eq!(a.jobs[1].job.duplicate_of.as_deref(), Some("j1"));
    let d: Vec<(&str, &str, &str)> = a
        .decisions
        .iter()
        .map(|d| {
            (
                d.job_reference.as_str(),
                d.acceptance_result.as_str(),
                d.decision.as_str(),
            )
        })
        .collect();
    assert_eq!(
        d,
        [
            ("j1", "unavailable", "continue"),
            ("j2", "unavailable", "stop")
        ]
    );
    assert_eq!(a.summary.jobs_by_state.get("no_notification"), Some(&2));
}

#[test]
fn a_single_status_read_or_different_commands_are_not_polls() {
    let xs = session(&[
        (
            vec![tool_use("k1", "Bash", json!({"command": "ls src"}))],
            vec![("k1", "a")],
            None,
        ),
        (
            vec![tool_use("k2", "Bash", json!({"command": "cargo build"}))],
            vec![("k2", "ok")],
            None,
        ),
        (
            vec![tool_use("k3", "Bash", json!({"command": "cargo build"}))],
            vec![("k3", "ok")],
            None,
        ),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    // `ls src` once is a read, not a poll; `cargo build` twice is work, not inspection.
    assert_eq!(a.summary.polls, 0, "{:#?}", a.episodes);
}

#[test]
fn background_agent_completed_and_bash_job_stopped() {
    let agent =
        json!({"description": "survey", "prompt": "look around", "run_in_background": true});
    let bash = json!({"command": "./serve.sh", "run_in_background": true});
    let note = |id: &str, status: &str| {
        format!("<task-notification>\n<task-id>{id}</task-id>\n<status>{status}</status>\n<summary>{status}</summary>\n</task-notification>")
    };
    let (n1, n2) = (note("a123", "completed"), note("b7", "stopped"));
    let xs = session(&[
        (
            vec![tool_use("g0", "Agent", agent), tool_use("g1", "Bash", bash)],
            vec![
                ("g0", "Async agent launched successfully. agentId: a123 (runs in the background)"),
                ("g1", "Command running in background with ID: b7. Output is being written to: /tmp/b7.output."),
            ],
            Some(&n1),
        ),
        (vec![json!({"type":"text","text":"waiting"})], vec![], Some(&n2)),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    let jobs: Vec<(&str, String, &str)> = a
        .jobs
        .iter()
        .map(|j| {
            let kind = serde_json::to_value(j.job.kind)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string();
            (j.job.reference.as_str(), kind, j.job.state.name())
        })
        .collect();
    assert_eq!(
        jobs,
        [
            ("a123", "background_agent".to_string(), "completed"),
            ("b7", "bash_background".to_string(), "stopped")
        ]
    );
    let d: Vec<(&str, &str)> = a
        .decisions
        .iter()
        .map(|d| (d.acceptance_result.as_str(), d.decision.as_str()))
        .collect();
    assert_eq!(d, [("pass", "keep"), ("fail", "investigate")]);
    // a123's notification came in the same request as its start result (0 s), b7's one
    // request (10 s) later.
    assert_eq!(
        (a.jobs[0].duration_s, a.jobs[1].duration_s),
        (Some(0.0), Some(10.0))
    );
}

/// Reported by a user: 20 status polls whose results differed only in a progress counter,
/// an elapsed time, an attempt number, a percentage and a spinner frame counted 0
/// redundant (only ISO timestamps and clock times were masked).
#[test]
fn polls_whose_results_differ_only_in_progress_counters_are_redundant() {
    let spin = ['⠋', '⠙', '⠹', '⠸', '⠼'];
    let results: Vec<String> = (1..=20)
        .map(|i| {
            format!(
                "{} build running: {i}/20 steps done, {}.{}s elapsed, attempt {i}, {}% at 12:00:{:02}",
                spin[i % 5],
                i * 3,
                i % 10,
                i * 5,
                i * 2
            )
        })
        .collect();
    let ids: Vec<String> = (1..=20).map(|i| format!("p{i}")).collect();
    let mut steps: Vec<Step> = (0..20)
        .map(|i| {
            (
                vec![tool_use(
                    &ids[i],
                    "mcp__ci__get_status",
                    json!({"job_id": "j9"}),
                )],
                vec![(ids[i].as_str(), results[i].as_str())],
                None,
            )
        })
        .collect();
    steps.push((vec![json!({"type":"text","text":"ok"})], vec![], None));
    let a = analyze(&session(&steps));
    assert_eq!(a.episodes.len(), 1);
    let e = &a.episodes[0];
    assert_eq!((e.polls, e.redundant), (20, 19));
    // The JSON says which rules made each pair equal.
    assert_eq!(e.redundant_calls.len(), 19);
    assert_eq!(e.redundant_calls[0].call, "p2");
    for want in [
        "counter",
        "duration",
        "attempt",
        "percentage",
        "spinner",
        "clock-time",
    ] {
        assert!(
            e.redundant_calls[0].equal_by.iter().any(|r| r == want),
            "{want}: {:?}",
            e.redundant_calls[0].equal_by
        );
    }
    // A real change of state is not hidden.
    assert_eq!(
        agentwire::analyze::polling::equal_results(
            &agentwire::api::normalize::Normalizer::defaults(),
            &results[0],
            "build failed: 3/20 steps done"
        ),
        None
    );
}

/// Reported by a user: in a generated 10,000-request session most "polls" were `grep`
/// calls with different patterns over the same files, grouped as polls of one target.
/// A poll repeats a status query; different queries over the same files are work.
#[test]
fn greps_with_different_patterns_over_one_file_are_work_not_polls() {
    let grep = |id: &str, pattern: &str| {
        vec![tool_use(
            id,
            "Bash",
            json!({"command": format!("grep -n {pattern} src/lib.rs")}),
        )]
    };
    let xs = session(&[
        (grep("g1", "fn"), vec![("g1", "1: fn a")], None),
        (grep("g2", "struct"), vec![("g2", "9: struct B")], None),
        (grep("g3", "impl"), vec![("g3", "12: impl B")], None),
        (grep("g4", "enum"), vec![("g4", "20: enum C")], None),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.summary.polls, 0, "{:#?}", a.episodes);
    assert_eq!(a.summary.poll_cost_usd, 0.0);
}

#[test]
fn the_same_grep_repeated_is_a_poll_of_one_query() {
    let grep = |id: &str, sleep: &str| {
        vec![tool_use(
            id,
            "Bash",
            json!({"command": format!("{sleep}grep -c done  build.log")}),
        )]
    };
    let xs = session(&[
        (grep("g1", ""), vec![("g1", "0")], None),
        (grep("g2", "sleep 5; "), vec![("g2", "0")], None),
        (grep("g3", ""), vec![("g3", "1")], None),
        (vec![json!({"type":"text","text":"ok"})], vec![], None),
    ]);
    let a = analyze(&xs);
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    // The wait before the second query does not make it another query.
    assert_eq!(
        (e.kind.as_str(), e.target.as_str(), e.polls, e.redundant),
        ("shell_inspect", "build.log", 3, 1)
    );
    assert_eq!(e.redundant_calls[0].equal_by, ["identical"]);
}

/// Reported by a user (issue 31, item 2): twelve identical read-only `gh api` calls
/// polling a CI run were not polls, because `gh` is not in the list of inspect commands.
/// A call repeated with the same input whose result does not change is a poll whatever
/// the command: by hand, one `same_call` episode of the 12 calls, each of g2..g12
/// repeating the previous result byte for byte (11 redundant, `identical`), 10 s apart.
#[test]
fn twelve_identical_gh_api_calls_with_the_same_result_are_polls() {
    let ids: Vec<String> = (1..=12).map(|i| format!("g{i}")).collect();
    let run = r#"{"id": 1, "status": "in_progress", "conclusion": null}"#;
    let mut steps: Vec<Step> = ids
        .iter()
        .map(|id| {
            (
                vec![tool_use(
                    id,
                    "Bash",
                    json!({"command": "gh api repos/o/r/actions/runs/1", "description": "Check the CI run"}),
                )],
                vec![(id.as_str(), run)],
                None,
            )
        })
        .collect();
    steps.push((
        vec![json!({"type":"text","text":"still running"})],
        vec![],
        None,
    ));
    let a = analyze(&session(&steps));
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.tool.as_str(), e.target.as_str()),
        ("same_call", "Bash", "Bash(gh api repos/o/r/actions/runs/1)")
    );
    assert_eq!((e.polls, e.redundant), (12, 11));
    assert_eq!(e.calls, ids);
    assert!(e
        .redundant_calls
        .iter()
        .all(|r| r.equal_by == ["identical"]));
    assert_eq!(e.mean_interval_s, Some(10.0));
    assert_eq!((a.summary.polls, a.summary.redundant_polls), (12, 11));
}
