//! `agentwire prompt`: export the system prompt and tool definitions of one request.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::api::view::Canonicalizer;
use agentwire::report::{self, meta::InputMeta, DocFormat};

use super::diff::Recorder;
use super::io::{check_doc_output, resolve_input, write_doc};
use crate::cli::{config, DocOutputArgs, PromptArgs, PromptFormatArg};

pub(super) fn prompt(a: PromptArgs) -> Result<ExitCode> {
    let out = DocOutputArgs {
        output: a.output.clone(),
        format: None,
        force: a.force,
        max_line: None,
    };
    let format = match (a.format, &a.output) {
        (Some(PromptFormatArg::Json), _) => DocFormat::Json,
        (Some(PromptFormatArg::Md), _) | (None, None) => DocFormat::Markdown,
        (None, Some(_)) => match config::doc_format(&out)? {
            DocFormat::Html => anyhow::bail!(
                "{}: prompt writes Markdown or JSON; name it .md or .json",
                a.output
                    .as_deref()
                    .unwrap_or(std::path::Path::new("-"))
                    .display()
            ),
            f => f,
        },
    };
    let file = std::path::PathBuf::from(a.input.split('#').next().unwrap_or(&a.input));
    check_doc_output(&out, &[file])?;
    let recorder = Recorder::new(&a.env, a.record_dir.as_deref(), a.route, a.force)?;
    let resolvers: [&dyn agentwire::diff::InputResolver; 1] = [&recorder];
    let r = resolve_input(&a.input, &resolvers)?;
    recorder.warn_unused_route();
    let mut canon = Canonicalizer::new();
    let mut pick = None;
    for (i, x) in r.trace.exchanges.iter().enumerate() {
        if r.trace.starts_context(i) {
            canon.new_context();
        }
        let v = canon.view(x);
        let Some(c) = v.request else { continue };
        let wanted = match r.exchange {
            Some(id) => x.id == id,
            None => v.place.thread_label == "main",
        };
        if wanted {
            let body = c.decoded.unwrap_or_else(|| x.request.body.bytes.to_vec());
            pick = Some((x.id, c.req, body));
            break;
        }
    }
    let Some((id, req, body)) = pick else {
        anyhow::bail!(
            "{}: no readable POST /v1/messages request{}; list them with `agentwire show`",
            a.input,
            r.exchange
                .map_or(String::new(), |n| format!(" with id {n}"))
        );
    };
    let p = report::prompt::prompt(&req, &body, id, InputMeta::of(&a.input, &r.trace));
    write_doc(&out, &report::prompt::render(&p, format))?;
    Ok(ExitCode::SUCCESS)
}
