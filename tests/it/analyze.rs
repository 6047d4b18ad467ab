//! `agentwire analyze` on the shared Claude Code captures (exchanges built with tshark, see
//! `common_tshark`), asserting the numbers each scenario was made to show. Capture text is
//! never asserted or snapshotted: only names, ids, counts and times.

use agentwire::analyze::{analyze_exchanges, Analysis, AnalyzeConfig, MissCause, UsageMode};

use crate::common::shared_capture;
use crate::common_tshark::{exchanges_from_pcap, have_tshark};

fn run(capture: &str) -> Option<Analysis> {
    assert!(
        have_tshark(),
        "tshark is required for {capture} (`make deps` installs it)"
    );
    let xs = exchanges_from_pcap(&shared_capture(&format!("claude-code/{capture}")));
    let cfg = AnalyzeConfig {
        // The fake server's usage figures are placeholders.
        usage: UsageMode::Simulated,
        ..AnalyzeConfig::default()
    };
    Some(analyze_exchanges(&xs, cfg))
}

#[test]
fn mcp_status_polling_one_episode_of_21_polls_19_redundant() {
    let Some(a) = run("cc2.1.303-mcp-status-polling.pcap") else {
        return;
    };
    assert_eq!(a.summary.requests, 23);
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(e.tool, "mcp__jobs__get_status");
    assert_eq!(e.kind, "same_call");
    assert_eq!(e.thread, "main");
    assert_eq!(e.polls, 21);
    assert_eq!(e.redundant, 19);
    assert_eq!(e.job.as_deref(), Some("job-7f3a"));
    // The 21st status says finished: no poll came after it.
    assert_eq!(e.after_notified, 0);
    assert_eq!((a.summary.polls, a.summary.redundant_polls), (21, 19));
    // Each poll triggered one model call; 19 of them were wasted.
    assert!(a.summary.wasted_tokens > 0 && a.summary.wasted_tokens < a.summary.poll_tokens);
    assert_eq!(a.jobs.len(), 1);
    assert_eq!(a.jobs[0].job.state.name(), "completed");
    assert_eq!(a.jobs[0].job.polls, 21);
    let d = &a.decisions[0];
    assert_eq!(
        (
            d.job_reference.as_str(),
            d.acceptance_result.as_str(),
            d.decision.as_str()
        ),
        ("job-7f3a", "pass", "keep")
    );
    assert!(
        d.artifact_reference.is_some(),
        "the finished status names an artifact path"
    );
}

#[test]
fn background_bash_polling_completed() {
    let Some(a) = run("cc2.1.304-bg-polling.pcap") else {
        return;
    };
    assert_eq!(a.summary.requests, 6);
    assert_eq!(a.jobs.len(), 1);
    let j = &a.jobs[0].job;
    assert_eq!(j.reference, "bj69g8yir");
    assert!(j
        .artifact
        .as_deref()
        .unwrap()
        .ends_with("/tasks/bj69g8yir.output"));
    assert_eq!(j.state.name(), "completed");
    assert_eq!(
        j.exit_code,
        Some(0),
        "from the summary \"completed (exit code 0)\""
    );
    // Three identical `sleep 1; echo checking` status commands: 3 polls, 2 redundant.
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.polls, e.redundant),
        ("shell_inspect", 3, 2)
    );
    assert_eq!(e.job.as_deref(), Some("bj69g8yir"));
    assert_eq!(e.after_notified, 0);
    let d = &a.decisions[0];
    assert_eq!(
        (
            d.observed_state.as_str(),
            d.acceptance_result.as_str(),
            d.decision.as_str()
        ),
        ("completed", "pass", "keep")
    );
    assert_eq!(d.tool_result_error, None);
}

#[test]
fn background_job_failed_with_exit_code_3() {
    let Some(a) = run("cc2.1.304-bg-job-failed.pcap") else {
        return;
    };
    assert_eq!(a.summary.requests, 7);
    assert_eq!(a.jobs.len(), 1);
    let j = &a.jobs[0].job;
    assert_eq!(j.reference, "bomrv7p2x");
    assert_eq!(j.state.name(), "failed");
    assert_eq!(j.exit_code, Some(3));
    // Four `tail -n 1 build.log` checks (one after `sleep 2;`), all `collecting`.
    assert_eq!(a.episodes.len(), 1, "{:#?}", a.episodes);
    let e = &a.episodes[0];
    assert_eq!(
        (e.kind.as_str(), e.target.as_str(), e.polls, e.redundant),
        ("shell_inspect", "build.log", 4, 3)
    );
    assert_eq!(e.job.as_deref(), Some("bomrv7p2x"));
    let d = &a.decisions[0];
    assert_eq!(d.job_reference, "bomrv7p2x");
    assert_eq!(
        (
            d.observed_state.as_str(),
            d.acceptance_result.as_str(),
            d.decision.as_str()
        ),
        ("failed", "fail", "investigate")
    );
    // The assistant said "finished" before the notification arrived.
    assert!(a.jobs[0].job.claimed_done_early);
    assert!(d
        .unresolved_fact
        .as_deref()
        .unwrap()
        .contains("exit code 3; the assistant reported it finished before the notification"));
    assert_eq!(a.summary.jobs_by_state.get("failed"), Some(&1));
}

#[test]
fn cache_ttl_gap_miss_after_330_seconds() {
    let Some(a) = run("cc2.1.304-cache-ttl-gap.pcap") else {
        return;
    };
    let r = &a.requests;
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].cause, Some(MissCause::ColdStart));
    assert_eq!(r[1].status, "hit");
    assert!(r[1].tokens.read > 0 && r[1].cause.is_none());
    // Third request: ~330 s after the second (tshark: 1795954822.080330 - 1795954491.959632).
    match &r[2].cause {
        Some(MissCause::TtlExpired { gap_s, ttl_s }) => {
            assert!((gap_s - 330.120698).abs() < 0.001, "{gap_s}");
            assert_eq!(*ttl_s, 300);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r[2].tokens.read, 0);
    assert_eq!(r[2].miss_tokens, r[1].tokens.read + r[1].tokens.write());
    assert_eq!(r[3].status, "hit");
    assert!(a
        .summary
        .misses_by_cause
        .iter()
        .any(|c| c.cause == "ttl_expired" && c.requests == 1));
}

/// Reported by a user: tools sent with `defer_loading: true` were counted in the cached
/// prefix, so loading CronCreate and CronList through ToolSearch invented a
/// `tools_changed` miss (9,753 tokens). Anthropic: deferred tools are not part of the
/// prefix; loading them does not break the cache.
#[test]
fn deferred_tools_loaded_by_toolsearch_do_not_break_the_cache() {
    let Some(a) = run("cc2.1.304-toolsearch-load.pcap") else {
        return;
    };
    let r = &a.requests;
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].cause, Some(MissCause::ColdStart));
    // The second request sends CronCreate and CronList with defer_loading: the prefix is
    // unchanged, so it reads everything the first one wrote.
    assert_eq!((r[1].status.as_str(), r[1].cause.clone()), ("hit", None));
    assert_eq!(r[1].tokens.read, r[0].tokens.write());
    assert_eq!(r[2].status, "hit");
    assert!(a
        .summary
        .misses_by_cause
        .iter()
        .all(|c| c.cause != "tools_changed"));
    assert_eq!(a.summary.cache_miss_tokens, 0);
}

#[test]
fn subagent_two_threads_with_per_thread_figures() {
    let Some(a) = run("cc2.1.304-subagent.pcap") else {
        return;
    };
    assert_eq!(a.summary.threads, 2);
    let names: Vec<&str> = a.threads.iter().map(|t| t.thread.as_str()).collect();
    assert_eq!(names, ["main", "sub-1"]);
    assert_eq!((a.threads[0].requests, a.threads[1].requests), (2, 2));
    let threads: Vec<(&str, usize)> = a
        .requests
        .iter()
        .map(|r| (r.thread.as_str(), r.turn))
        .collect();
    assert_eq!(
        threads,
        [("main", 0), ("sub-1", 0), ("sub-1", 1), ("main", 1)]
    );
    // The subagent has its own tool list: it starts cold, then hits its own prefix.
    assert_eq!(a.requests[1].cause, Some(MissCause::ColdStart));
    assert_eq!(a.requests[2].status, "hit");
    // The main thread's second request reads the prefix its first request wrote.
    assert_eq!(a.requests[3].status, "hit");
    for t in &a.threads {
        let sum: f64 = a
            .requests
            .iter()
            .filter(|r| r.thread == t.thread)
            .map(|r| r.cost_usd.unwrap())
            .sum();
        assert!((t.cost_usd - sum).abs() < 1e-12);
        assert!(t.tokens.read > 0);
    }
}

/// Reported by a user: with two traces of the same scenario (tool-use ids repeat), the
/// second trace's job took the first trace's notification (negative duration, every poll
/// "after notification").
#[test]
fn jobs_pair_with_their_own_traces_notification_when_several_traces_are_analyzed() {
    use agentwire::analyze::analyze_files;
    use agentwire::trace::{Context, TraceWriter};
    let xs = exchanges_from_pcap(&shared_capture("claude-code/cc2.1.304-bg-polling.pcap"));
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<std::path::PathBuf> = (0..2)
        .map(|i| dir.path().join(format!("t{i}.jsonl")))
        .collect();
    for p in &paths {
        let mut w = TraceWriter::create(p, &Context::new()).unwrap();
        for x in &xs {
            w.write_exchange(x).unwrap();
        }
    }
    let refs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let cfg = AnalyzeConfig {
        usage: UsageMode::Simulated,
        ..AnalyzeConfig::default()
    };
    let a = analyze_files(&refs, cfg).unwrap();
    assert_eq!(a.jobs.len(), 2);
    let one = run("cc2.1.304-bg-polling.pcap").unwrap();
    for j in &a.jobs {
        assert_eq!(
            j.duration_s, one.jobs[0].duration_s,
            "{}",
            j.job.thread_label
        );
        assert!(j.duration_s.unwrap() > 0.0);
    }
    assert_eq!(a.summary.polls_after_notified, 0);
}

/// Reported by a user: on the first-party route Claude Code's billing system block changes
/// on every request, and the simulation blamed it for a miss on every turn (0% hits).
#[test]
fn billing_header_block_does_not_break_the_cache_on_the_first_party_route() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fp.jsonl");
    let script = crate::common::repo().join("captures/scenarios/bg-build.json");
    let o = std::process::Command::new(crate::common::bin())
        .args([
            "record",
            "--cli",
            "claude-code@2.1.304",
            "--route",
            "first-party",
            "--script",
        ])
        .arg(&script)
        .arg("-o")
        .arg(&out)
        .args(["--", "-p", "run the build", "--allowedTools", "Bash"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = agentwire::analyze::analyze_files(&[out.as_path()], AnalyzeConfig::default()).unwrap();
    // the billing block really changes between requests…
    let t = agentwire::input::open_trace(&out).unwrap();
    let billing: std::collections::HashSet<String> = t
        .exchanges
        .iter()
        .filter(|x| x.is_messages())
        .filter_map(|x| {
            let r = agentwire::api::MessagesRequest::parse(&x.request.body.bytes).ok()?;
            r.system?.blocks.first()?.text().map(str::to_string)
        })
        .filter(|s| s.starts_with("x-anthropic-billing-header"))
        .collect();
    assert!(billing.len() > 1, "the fingerprint changes per request");
    // …yet only the cold start misses, and nothing is blamed on the system prompt
    assert!(
        a.summary.cache_hit_rate > 0.5,
        "hit rate {}",
        a.summary.cache_hit_rate
    );
    assert!(a
        .requests
        .iter()
        .all(|r| !matches!(r.predicted.cause, Some(MissCause::SystemChanged { .. }))));
}

/// Reported by a user: `--usage auto` trusted the usage figures agentwire's own stub
/// server made up (cache fields 0), so a stub recording showed a 0% hit rate and
/// "unexplained" misses. Synthesized responses are marked in the trace (the
/// `synthesized` note) and recognisable on the wire (`msg_agentwire_` ids), and `auto`
/// simulates them; the summary says which usage each figure comes from.
#[tokio::test(flavor = "multi_thread")]
async fn usage_agentwire_made_up_is_never_taken_for_the_apis() {
    use crate::common::TestServer;
    use crate::hand_trace::{cc, text, tool, Conv};
    use agentwire::capture::server::ServerConfig;
    let s = TestServer::start(ServerConfig::default()).await;
    let mut c = Conv::new("claude-sonnet-4-5");
    c.tools = vec![tool("Bash", 2000)];
    c.system = vec![cc(text(8000, 's'), None)];
    c.user(vec![text(400, 'u')]);
    let client = reqwest::Client::new();
    for k in 0..2 {
        let r = client
            .post(s.url("/v1/messages"))
            .header("content-type", "application/json")
            .header("x-api-key", crate::common::TEST_KEY)
            .body(c.body())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        c.assistant(vec![text(100, 'a')]);
        c.user(vec![text(100, if k == 0 { 'v' } else { 'w' })]);
    }
    let t = s.finish().await;
    let xs: Vec<_> = t
        .exchanges
        .iter()
        .filter(|x| x.is_messages())
        .cloned()
        .collect();
    assert_eq!(xs.len(), 2);
    assert!(xs.iter().all(|x| x.notes.contains_key("synthesized")));
    let check = |xs: &[agentwire::trace::Exchange], why: &str| {
        let a = analyze_exchanges(xs, AnalyzeConfig::default());
        assert_eq!(
            (a.usage_used.simulated, a.usage_used.recorded),
            (2, 0),
            "{why}"
        );
        assert!(
            a.usage_used
                .reasons
                .keys()
                .all(|r| r.contains("synthesized")),
            "{why}: {:?}",
            a.usage_used.reasons
        );
        assert_eq!(a.requests[1].status, "hit", "{why}");
        assert!(a.summary.cache_hit_rate > 0.0, "{why}");
        assert!(a
            .requests
            .iter()
            .all(|r| r.cause != Some(MissCause::Unexplained)));
    };
    check(&xs, "recorded by agentwire's server");
    // The same bytes as a packet capture would give them: no notes, another source kind.
    let pcap_like: Vec<_> = xs
        .iter()
        .cloned()
        .map(|mut x| {
            x.notes.clear();
            x.source = agentwire::trace::Source::new(agentwire::trace::SourceKind::Pcap);
            x
        })
        .collect();
    check(&pcap_like, "captured from the wire");
}

/// Reported by a new user: `analyze` on a capture recorded against another fake server
/// showed a 0% hit rate and five "unexplained" misses with nothing saying why; the only
/// hint was "agreement 1/6" in the table. The placeholder usage (every request a miss)
/// disagrees with the simulation on 5 of the 6 requests the scenario made (1 cold start
/// agrees), so `analyze` now says so and names `--usage simulated`; with that flag, or
/// when the figures agree, it stays quiet.
#[test]
fn placeholder_usage_from_another_fake_server_is_pointed_out() {
    use agentwire::analyze::analyze_files;
    let pcap = shared_capture("claude-code/cc2.1.304-bg-polling.pcap");
    let auto = analyze_files(&[pcap.as_path()], AnalyzeConfig::default()).unwrap();
    let g = auto.summary.agreement.as_ref().unwrap();
    assert_eq!((g.agreed, g.compared), (1, 6));
    let hint: Vec<&String> = auto
        .warnings
        .iter()
        .filter(|w| w.contains("--usage simulated"))
        .collect();
    assert_eq!(hint.len(), 1, "{:?}", auto.warnings);
    assert!(hint[0].contains("1 of 6 requests"), "{}", hint[0]);
    let simulated = AnalyzeConfig {
        usage: UsageMode::Simulated,
        ..AnalyzeConfig::default()
    };
    let sim = analyze_files(&[pcap.as_path()], simulated).unwrap();
    assert!(sim.warnings.is_empty(), "{:?}", sim.warnings);
    // The CLI prints it on stderr, and (a second new user: the warning came last, after
    // the whole table) the report's summary says it next to the agreement figure.
    let o = std::process::Command::new(crate::common::bin())
        .arg("analyze")
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rerun with --usage simulated"), "{err}");
    let table = String::from_utf8_lossy(&o.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with("predicted vs observed agreement"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains("1/6") && row.contains("rerun with --usage simulated"),
        "{row}"
    );
    let sim = std::process::Command::new(crate::common::bin())
        .args(["analyze", "--usage", "simulated"])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&sim.stdout).contains("rerun with"));
}
