//! `agentwire report diff|analyze`: resolve the inputs (traces, pcap files, CLI specs
//! recorded on the fly), compute the diff or the analysis, and write the shareable
//! report (HTML, Markdown or JSON).

use std::process::ExitCode;

use anyhow::Result;

use agentwire::report::{self, meta::InputMeta};

use super::diag::warn_problems;
use super::diff::Recorder;
use super::io::{check_doc_output, resolve_input, write_doc};
use crate::cli::{config, ReportAnalyzeArgs, ReportCommand, ReportDiffArgs};

pub(super) fn report(c: ReportCommand) -> Result<ExitCode> {
    match c {
        ReportCommand::Diff(a) => diff(a),
        ReportCommand::Analyze(a) => analyze(a),
    }
}

fn diff(a: ReportDiffArgs) -> Result<ExitCode> {
    use agentwire::diff::{self, Mode};
    let format = config::doc_format(&a.out)?;
    // `FILE#N` names FILE
    let files = [&a.a, &a.b].map(|i| std::path::PathBuf::from(i.split('#').next().unwrap_or(i)));
    check_doc_output(&a.out, &files)?;
    let norm = config::normalizer(a.rules.as_deref(), a.no_normalize)?;
    let recorder = Recorder::new(&a.env, a.record_dir.as_deref(), a.route, a.out.force)?;
    let resolvers: [&dyn diff::InputResolver; 1] = [&recorder];
    let ra = resolve_input(&a.a, &resolvers)?;
    let rb = resolve_input(&a.b, &resolvers)?;
    let mode = if a.all { Mode::All } else { Mode::First };
    let d = diff::diff_inputs(&ra, &rb, mode, &norm)?;
    recorder.warn_unused_route();
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
    use agentwire::analyze::analyze_files_observed;
    use agentwire::report::meta::MetaCollector;
    let format = config::doc_format(&a.out)?;
    check_doc_output(&a.out, &a.traces)?;
    let paths: Vec<&std::path::Path> = a.traces.iter().map(|p| p.as_path()).collect();
    // Each input streamed once, as `analyze` reads it; its description collected on the way.
    let mut metas: Vec<MetaCollector> = paths.iter().map(|_| MetaCollector::default()).collect();
    let result = analyze_files_observed(&paths, config::analysis(&a.settings)?, &mut |i, r| {
        metas[i].record(r)
    })?;
    let metas = metas
        .into_iter()
        .zip(&paths)
        .map(|(m, p)| m.finish(&p.display().to_string()))
        .collect();
    let code = super::analyze::warnings(&result);
    let opts = report::audit_page::Options { max_rows: None };
    let text = report::audit_page::render(&result, metas, format, &opts);
    write_doc(&a.out, &text)?;
    Ok(code)
}
