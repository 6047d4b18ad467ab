//! Resolving a diff input as the user wrote it to a trace and, optionally, one exchange.
//!
//! Built in: a trace file (`trace.jsonl`), one exchange of it (`trace.jsonl#3`, the
//! exchange id as `agentwire show` prints it), and any other input the trace reader
//! recognises (a bare request body becomes exchange 0, imports their exchanges). Other forms — a CLI spec such as
//! `claude-code@2.1.304`, recorded on the fly — come from an [`InputResolver`] that the
//! caller passes to [`resolve`]; resolvers are asked first, in order.

use std::path::Path;

use crate::trace::Trace;

use super::DiffError;

/// A resolved input.
#[derive(Debug)]
pub struct Resolved {
    /// The input as written (used in labels and messages).
    pub input: String,
    /// The trace.
    pub trace: Trace,
    /// The exchange id picked with `#N`, if any.
    pub exchange: Option<u64>,
}

/// Turns an input string into a trace. Return `None` when the input is not of your form,
/// so the next resolver (and finally the built-in file forms) gets it.
pub trait InputResolver {
    /// Resolve `input`, or `None` when it is not of this resolver's form.
    fn resolve(&self, input: &str) -> Option<Result<Resolved, DiffError>>;
}

/// Resolve `input`: the custom `resolvers` first, then `FILE#N`, then `FILE`.
///
/// Errors: [`DiffError::Selector`] when the `#N` suffix is not a number;
/// [`DiffError::Input`] naming the input when it is no readable file or exchange N does
/// not exist; trace read errors.
pub fn resolve(input: &str, resolvers: &[&dyn InputResolver]) -> Result<Resolved, DiffError> {
    for r in resolvers {
        if let Some(res) = r.resolve(input) {
            return res;
        }
    }
    let err = |message: String| DiffError::Input {
        input: input.to_string(),
        message,
    };
    // `-`: standard input (a trace, or a request body piped in); a directory reads as
    // its files, as in every reading command.
    if input == "-" || exists(input) {
        return open(input, input, None);
    }
    if let Some((path, n)) = input.rsplit_once('#') {
        let id: u64 = n.parse().map_err(|_| DiffError::Selector {
            input: input.to_string(),
            n: n.to_string(),
        })?;
        if !exists(path) {
            return Err(err(format!("no such trace file {path:?}")));
        }
        return open(input, path, Some(id));
    }
    if input.contains('@') && !input.contains('/') {
        return Err(err(
            "not a file, and not a CLI spec this build can record; record it with `agentwire record --cli NAME@VERSION -o FILE` and diff the trace file".into(),
        ));
    }
    Err(err(
        "no such file; give a trace file, FILE#N for one exchange, a request body (JSON), or - for standard input".into(),
    ))
}

/// True when `path` names anything that can be read: a file, a directory, a FIFO or a
/// device (`/dev/null`, `/dev/stdin`, a shell's `<(…)`), through links.
fn exists(path: &str) -> bool {
    std::fs::metadata(path).is_ok()
}

fn open(input: &str, path: &str, exchange: Option<u64>) -> Result<Resolved, DiffError> {
    // a bare request body is recognised by the trace input like any other format
    let trace = crate::input::open_trace(Path::new(path))?;
    if let Some(id) = exchange {
        trace.exchange(id)?;
    }
    Ok(Resolved {
        input: input.to_string(),
        trace,
        exchange,
    })
}
