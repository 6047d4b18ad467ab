//! `agentwire prompt`: export the system prompt and tool definitions of one request.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::api::view::Canonicalizer;
use agentwire::report::{self, meta::InputMeta, DocFormat};

use super::io::{print_stdout, resolve_input};
use crate::cli::{PromptArgs, PromptFormatArg};

pub(super) fn prompt(a: PromptArgs) -> Result<ExitCode> {
    let r = resolve_input(&a.input, &[])?;
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
    let format = match a.format {
        PromptFormatArg::Md => DocFormat::Markdown,
        PromptFormatArg::Json => DocFormat::Json,
    };
    print_stdout(&report::prompt::render(&p, format))?;
    Ok(ExitCode::SUCCESS)
}
