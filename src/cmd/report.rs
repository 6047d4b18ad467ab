//! `agentwire report diff|analyze`: resolve the inputs (traces, pcap files, CLI specs
//! recorded on the fly), compute the diff or the analysis, and write the shareable
//! report (HTML, Markdown or JSON).

use std::process::ExitCode;

use anyhow::Result;

use agentwire::report::{self, meta::InputMeta};
use agentwire::trace::Trace;

use super::diff::RecordResolver;
use super::{doc_format, normalizer, warn_problems, write_doc};
use crate::cli::{ReportAnalyzeArgs, ReportCommand, ReportDiffArgs};

pub(super) fn report(c: ReportCommand) -> Result<ExitCode> {
    match c {
        ReportCommand::Diff(a) => diff(a),
        ReportCommand::Analyze(a) => analyze(a),
    }
}

fn diff(a: ReportDiffArgs) -> Result<ExitCode> {
    use agentwire::diff::{self, Mode};
    let format = doc_format(&a.out)?;
    let norm = normalizer(a.rules.as_deref(), a.no_normalize)?;
    let recorder = RecordResolver::new(&a.env, a.record_dir.as_deref(), a.route, a.out.force)?;
    let resolvers: [&dyn diff::InputResolver; 1] = [&recorder];
    let ra = super::resolve_input(&a.a, &resolvers)?;
    let rb = super::resolve_input(&a.b, &resolvers)?;
    let mode = if a.all { Mode::All } else { Mode::First };
    let d = diff::diff_inputs(&ra, &rb, mode, &norm)?;
    let opts = report::diff_page::Options {
        max_line: a.out.max_line.map(|n| n as usize),
    };
    let text = report::diff_page::render(
        &d,
        InputMeta::of(&ra.input, &ra.trace),
        InputMeta::of(&rb.input, &rb.trace),
        format,
        &opts,
    );
    write_doc(&a.out, &text)?;
    Ok(warn_problems(&d.problems))
}

fn analyze(a: ReportAnalyzeArgs) -> Result<ExitCode> {
    use agentwire::analyze::Analyzer;
    let format = doc_format(&a.out)?;
    let mut an = Analyzer::new(super::analyze::config(&a.settings)?);
    let mut metas = Vec::new();
    // One input at a time: each trace is dropped once the analyzer has taken it in.
    for p in &a.traces {
        let trace = Trace::open(p)?;
        let name = p.display().to_string();
        an.begin_trace(&name);
        for x in &trace.exchanges {
            an.push(x);
        }
        for m in &trace.mcp {
            an.push_mcp(m.clone());
        }
        for _ in &trace.problems {
            an.bad_line();
        }
        metas.push(InputMeta::of(&name, &trace));
    }
    let result = an.finish();
    let code = super::analyze::warnings(&result);
    let opts = report::audit_page::Options { max_rows: None };
    let text = report::audit_page::render(&result, metas, format, &opts);
    write_doc(&a.out, &text)?;
    Ok(code)
}
