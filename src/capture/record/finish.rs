//! The end of a recording: the final context, the working trace rewritten into the output
//! (kept when that fails), and the [`RecordOutcome`] summary.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::config::RecordConfig;
use super::RecordError;
use crate::api::view::Canonicalizer;
use crate::capture::route::{Route, FIRST_PARTY_HOST};
use crate::capture::Diagnostics;
use crate::trace::redact::redact_env;
use crate::trace::{Context, Trace, TraceError, TraceWriter};

/// What a recording produced.
#[derive(Clone, Debug)]
pub struct RecordOutcome {
    /// The CLI's exit code (`None`: killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// Exchanges recorded.
    pub exchanges: usize,
    /// Model requests recorded (`/v1/messages`, `/v1/responses` and the other dialects';
    /// a Responses WebSocket message counts as one, its prewarm too).
    pub messages: usize,
    /// Where the model requests went, as the summary names them: `/v1/messages`,
    /// `/v1/responses`, or `model requests` when they went to several APIs.
    pub endpoint: String,
    /// Tools in the first main-thread Messages request (`None`: no such request).
    pub tools: Option<usize>,
    /// Sum of request body sizes, in bytes.
    pub body_bytes: u64,
    /// MCP records (messages and server events) merged into the trace.
    pub mcp_records: usize,
    /// Last lines of the CLI's stderr and stdout (for failures).
    pub output_tail: String,
    /// The recording context written to the trace.
    pub context: Context,
    /// Lines of the working trace that could not be read back when it was rewritten into
    /// the output (each warned about; the working trace is then kept, see `finalize`).
    pub unreadable_lines: usize,
}

impl RecordOutcome {
    /// The one-line summary `record` prints.
    pub fn summary(&self, output: &std::path::Path) -> String {
        let who = match (&self.context.cli, &self.context.cli_version) {
            (Some(c), Some(v)) => match &self.context.cli_tag {
                Some(t) => format!("{c}@{t} ({v})"),
                None => format!("{c}@{v}"),
            },
            (Some(c), None) => c.clone(),
            _ => "command".into(),
        };
        let exit = match (self.exit_code, self.timed_out) {
            (_, true) => "timed out".to_string(),
            (Some(c), _) => format!("exit {c}"),
            (None, _) => "killed".to_string(),
        };
        format!(
            "{who}: {exit}; {} ({} {}), {} tools, {} request body bytes{} -> {}",
            crate::text::fmt::plural(self.exchanges as u64, "exchange"),
            self.messages,
            self.endpoint,
            self.tools.map_or("-".into(), |t| t.to_string()),
            self.body_bytes,
            if self.mcp_records > 0 {
                format!(
                    ", {}",
                    crate::text::fmt::plural(self.mcp_records as u64, "MCP record")
                )
            } else {
                String::new()
            },
            output.display()
        )
    }
}

/// The recording context as the trace header holds it: the route and base URL, the
/// label, the command line, and the environment with secrets redacted.
pub(super) fn set_context(
    context: &mut Context,
    cfg: &RecordConfig,
    base_url: String,
    (program, args): (&str, &[String]),
    env: &BTreeMap<String, String>,
) {
    let route = cfg.route.unwrap_or(Route::FirstParty);
    context.route = Some(route.name().into());
    context.base_url = Some(match route {
        Route::FirstParty => format!("https://{FIRST_PARTY_HOST} (via proxy {base_url})"),
        Route::CustomProvider
        | Route::Builtin
        | Route::Anthropic
        | Route::OpenAi
        | Route::Compatible => {
            format!("{}/v1", base_url.trim_end_matches('/'))
        }
        Route::BaseUrl => base_url,
    });
    context.label = cfg.label.clone();
    context.command = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .collect();
    context.env = env
        .iter()
        .map(|(k, v)| (k.clone(), redact_env(k, v)))
        .collect();
}

/// [`finalize_reporting`] into `cfg.output`; when the final trace cannot be written, the
/// error names where the working trace is kept (one in the sandbox, removed on return, is
/// copied out first).
pub(super) fn finalize_or_keep(
    cfg: &RecordConfig,
    tmp_trace: &std::path::Path,
    context: &Context,
    mcp_dir: &std::path::Path,
) -> Result<Trace, RecordError> {
    let diagnostics = &cfg.server.diagnostics;
    finalize_reporting(
        tmp_trace,
        &cfg.output,
        cfg.force,
        context,
        mcp_dir,
        diagnostics,
    )
    .map_err(|source| {
        let kept = if crate::output::writes_through(&cfg.output) {
            keep_copy(tmp_trace)
        } else {
            Ok(tmp_trace.to_path_buf())
        };
        match kept {
            Ok(k) => RecordError::Finalize {
                kept: k.display().to_string(),
                output: cfg.output.display().to_string(),
                source,
            },
            Err(_) => RecordError::Trace(source),
        }
    })
}

/// The outcome of a run: the command's exit, the last lines it printed (from `out_path`),
/// and counts from the trace as written.
pub(super) fn outcome(
    trace: &Trace,
    out_path: &std::path::Path,
    exit_code: Option<i32>,
    timed_out: bool,
) -> RecordOutcome {
    let text = std::fs::read_to_string(out_path).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(20).collect();
    let mut canon = Canonicalizer::new();
    let mut tools = None;
    let mut messages = 0;
    let mut dialects = std::collections::BTreeSet::new();
    for x in &trace.exchanges {
        let v = canon.view(x);
        if let Some(d) = crate::api::Dialect::of(x) {
            messages += 1;
            dialects.insert(d);
        }
        if let Some(c) = v.request.filter(|_| v.place.thread_label == "main") {
            tools.get_or_insert(c.req.tools.len());
        }
    }
    RecordOutcome {
        exit_code,
        timed_out,
        exchanges: trace.exchanges.len(),
        messages,
        endpoint: match dialects.len() {
            0 => "/v1/messages".into(),
            1 if dialects.contains(&crate::api::Dialect::Responses) => "/v1/responses".into(),
            1 if dialects.contains(&crate::api::Dialect::Messages) => "/v1/messages".into(),
            1 if dialects.contains(&crate::api::Dialect::ChatCompletions) => {
                "/v1/chat/completions".into()
            }
            _ => "model requests".into(),
        },
        tools,
        body_bytes: trace
            .exchanges
            .iter()
            .map(|x| x.request.body.len() as u64)
            .sum(),
        mcp_records: trace.mcp.len(),
        output_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        context: trace.context.clone(),
        unreadable_lines: trace.problems.len(),
    }
}

/// Copy a working trace kept in the sandbox (which is removed) to the current directory,
/// as `agentwire-record-PID.jsonl.tmp`; returns where.
pub(super) fn keep_copy(tmp: &std::path::Path) -> std::io::Result<PathBuf> {
    let keep = std::env::current_dir()
        .unwrap_or_default()
        .join(format!("agentwire-record-{}.jsonl.tmp", std::process::id()));
    std::fs::copy(tmp, &keep).map(|_| keep)
}

/// [`finalize_reporting`] with nothing reported.
#[cfg(test)]
pub(super) fn finalize(
    tmp: &std::path::Path,
    output: &std::path::Path,
    force: bool,
    context: &Context,
    mcp_dir: &std::path::Path,
) -> Result<Trace, TraceError> {
    finalize_reporting(tmp, output, force, context, mcp_dir, &Diagnostics::silent())
}

/// Rewrite the temporary trace with the final context in its header, sorted by exchange
/// id (arrival order), followed by the MCP records found in `mcp_dir` (time order), and
/// move it into place. Lines that did not read back, of either, are reported to
/// `diagnostics` ([`report_unread`]).
pub(super) fn finalize_reporting(
    tmp: &std::path::Path,
    output: &std::path::Path,
    force: bool,
    context: &Context,
    mcp_dir: &std::path::Path,
    diagnostics: &Diagnostics,
) -> Result<Trace, TraceError> {
    let mut t = Trace::read(tmp)?;
    t.exchanges.sort_by_key(|x| x.id);
    let (mcp, problems) = crate::capture::mcp::collect(mcp_dir, diagnostics);
    for (file, p) in &problems {
        diagnostics.warn(&format!("MCP records {}: {p}", file.display()));
    }
    t.mcp = mcp;
    // (`record` checked at its start that `output` may be written; one that appeared
    // since is replaced only with `force`.)
    let mut w = TraceWriter::create_atomic(output, force, context)?;
    for x in &t.exchanges {
        w.write_exchange(x)?;
    }
    for m in &t.mcp {
        w.write_record(&m.line())?;
    }
    for o in &t.others {
        w.write_record(o)?;
    }
    w.finish()?;
    if t.problems.is_empty() {
        let _ = std::fs::remove_file(tmp);
    } else {
        report_unread(tmp, output, &t.problems, diagnostics);
    }
    t.path = output.to_path_buf();
    t.context = crate::trace::redact::context(context);
    Ok(t)
}

/// Warn about the lines of the working trace `tmp` that did not read back, and keep it
/// where the user can find it: nothing is lost, the lines stay in the working trace (next
/// to the output; the sandbox holding it for `-o -` is removed, so it is copied out
/// first).
pub(super) fn report_unread(
    tmp: &std::path::Path,
    output: &std::path::Path,
    problems: &[crate::trace::ReadProblem],
    diagnostics: &Diagnostics,
) {
    let name = tmp.display().to_string();
    for p in problems {
        diagnostics.warn(&p.located(&name));
    }
    let kept = if crate::output::writes_through(output) {
        keep_copy(tmp)
    } else {
        Ok(tmp.to_path_buf())
    };
    let lines = crate::text::fmt::plural(problems.len() as u64, "line");
    diagnostics.warn(&match kept {
        Ok(k) => format!(
            "{lines} of the recording could not be read back and are missing from the trace; the recording as written is kept at {}",
            k.display()
        ),
        Err(e) => format!(
            "{lines} of the recording could not be read back, and its working trace could not be kept ({e})"
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_working_trace_that_do_not_read_back_are_kept_not_dropped() {
        // Found in review (the kind of an adversarial test's finding: a reader's problems
        // collected and never reported): `finalize` rewrote the working trace without its
        // unreadable lines and deleted it.
        let dir = tempfile::tempdir().unwrap();
        let (tmp, out) = (dir.path().join("t.jsonl.tmp"), dir.path().join("t.jsonl"));
        let mut w = TraceWriter::create(&tmp, &Context::new()).unwrap();
        let x = crate::trace::test_exchange("POST", "/v1/messages", &[], b"{}");
        w.write_exchange(&x).unwrap();
        w.finish().unwrap();
        let mut bytes = std::fs::read(&tmp).unwrap();
        bytes.extend_from_slice(b"{\"type\":\"exchange\",\"id\":1,\"cut");
        std::fs::write(&tmp, &bytes).unwrap();
        let t = finalize(
            &tmp,
            &out,
            false,
            &Context::new(),
            &dir.path().join("no-mcp"),
        )
        .unwrap();
        assert_eq!(t.exchanges.len(), 1);
        assert_eq!(t.problems.len(), 1);
        assert_eq!(
            std::fs::read(&tmp).unwrap(),
            bytes,
            "the working trace is kept as written"
        );
        assert_eq!(Trace::read(&out).unwrap().exchanges.len(), 1);
    }
}
