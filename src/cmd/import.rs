//! `agentwire import`: read other tools' files (and agentwire traces) into one trace.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use agentwire::input::{open_input, InputOptions};
use agentwire::trace::{Context, Record, TraceWriter};

use super::{check_output, Warnings};
use crate::cli::ImportArgs;

pub(super) fn import(a: ImportArgs) -> Result<ExitCode> {
    if !super::is_stdout(&a.output) {
        check_output(&a.output, a.force)?; // before reading anything
    }
    // Standard output too: a shell may have pointed it at an input.
    agentwire::output::check_not_input(&a.output, &a.inputs)?;
    let bar = super::progress_files();
    let progress_bar = bar.clone();
    let opts = InputOptions {
        since: a.since,
        progress: Some(Arc::new(move |p: &agentwire::input::Progress| {
            progress_bar.set_length(p.bytes_total);
            progress_bar.set_position(p.bytes_done);
            progress_bar.set_message(format!("{}/{} files", p.files_done, p.files_total));
        })),
    };
    let mut writer: Option<TraceWriter> = None;
    let mut code = ExitCode::SUCCESS;
    let mut count = 0u64;
    let mut formats: BTreeMap<String, u64> = BTreeMap::new();
    let mut skipped = 0usize;
    for path in &a.inputs {
        let mut input = open_input(path, &opts)?;
        let mut warnings = Warnings::new(&path.display().to_string());
        for rec in &mut input {
            match rec? {
                // each imported file (or session) starts its own recording context, so
                // sessions without ids never run on across inputs
                Record::Header { context, .. } => match &mut writer {
                    None => writer = Some(create(&a, context)?),
                    Some(w) => w.write_record(&serde_json::json!({
                        "type": "trace",
                        "format": agentwire::trace::FORMAT_NAME,
                        "version": agentwire::trace::FORMAT_VERSION,
                        "context": context,
                    }))?,
                },
                Record::Exchange(mut x) => {
                    let w = match &mut writer {
                        Some(w) => w,
                        None => writer.insert(create(&a, Context::new())?),
                    };
                    x.id = count;
                    count += 1;
                    use agentwire::trace::SourceKind;
                    let f = match (&x.source.format, x.source.kind) {
                        (Some(f), _) => f.clone(),
                        (None, SourceKind::Pcap | SourceKind::Live) => "packet capture".into(),
                        (None, _) => "agentwire-trace".into(),
                    };
                    *formats.entry(f).or_default() += 1;
                    w.write_exchange(&x)?;
                }
                Record::Mcp(m) => {
                    if let Some(w) = &mut writer {
                        w.write_record(&m.line())?;
                    }
                }
                Record::Other(v) => {
                    if let Some(w) = &mut writer {
                        w.write_record(&v)?;
                    }
                }
                Record::Bad(p) => warnings.bad_line(&p),
            }
        }
        warnings.skipped(input.skipped());
        skipped += input.skipped().len();
        if warnings.finish() != ExitCode::SUCCESS {
            code = ExitCode::from(super::DEGRADED);
        }
    }
    bar.finish_and_clear();
    if let Some(w) = writer {
        // the trace appears whole, or not at all
        w.finish()?;
    }
    let by_format: Vec<String> = formats.iter().map(|(f, n)| format!("{n} {f}")).collect();
    let skipped = if skipped > 0 {
        format!(
            "; {} skipped",
            agentwire::text::fmt::plural(skipped as u64, "file")
        )
    } else {
        String::new()
    };
    super::summary(
        &format!(
            "imported {} ({}){skipped} -> {}\n",
            agentwire::text::fmt::plural(count, "exchange"),
            by_format.join(", "),
            super::shown(&a.output)
        ),
        &a.output,
    )?;
    Ok(code)
}

fn create(a: &ImportArgs, mut context: Context) -> Result<TraceWriter> {
    context.agentwire_version = env!("CARGO_PKG_VERSION").into();
    if a.inputs.len() > 1 {
        context.cli_version = None;
    }
    context.label = Some(format!(
        "imported from {}",
        a.inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(TraceWriter::create_atomic(&a.output, a.force, &context)?)
}
