//! `agentwire prompt`: export the system prompt and tool definitions of one request.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::api::thread::ThreadTracker;
use agentwire::api::MessagesRequest;
use agentwire::report::{self, meta::InputMeta, DocFormat};

use super::{out, PcapResolver};
use crate::cli::{PromptArgs, PromptFormatArg};

pub(super) fn prompt(a: PromptArgs) -> Result<ExitCode> {
    let resolvers: [&dyn agentwire::diff::InputResolver; 1] = [&PcapResolver];
    let r = agentwire::diff::resolve(&a.input, &resolvers)?;
    let mut tracker = ThreadTracker::new();
    let mut pick = None;
    for x in r.trace.exchanges.iter().filter(|x| x.is_messages()) {
        let Ok(req) = MessagesRequest::parse(&x.request.body.bytes) else {
            continue;
        };
        let t = tracker.assign(&req);
        let wanted = match r.exchange {
            Some(id) => x.id == id,
            None => tracker.label(t) == "main",
        };
        if wanted {
            pick = Some((x, req));
            break;
        }
    }
    let Some((x, req)) = pick else {
        anyhow::bail!(
            "{}: no readable POST /v1/messages request{}; list them with `agentwire show`",
            a.input,
            r.exchange
                .map_or(String::new(), |n| format!(" with id {n}"))
        );
    };
    let p = report::prompt::prompt(
        &req,
        &x.request.body.bytes,
        x.id,
        InputMeta::of(&a.input, &r.trace),
    );
    let format = match a.format {
        PromptFormatArg::Md => DocFormat::Markdown,
        PromptFormatArg::Json => DocFormat::Json,
    };
    out(&report::prompt::render(&p, format))?;
    Ok(ExitCode::SUCCESS)
}
