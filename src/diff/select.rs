//! Which requests a diff compares, and the report that holds the comparisons.
//!
//! - [`Mode::First`]: the first main-thread `/v1/messages` request of each trace (or the
//!   exchange picked with `FILE#N`).
//! - [`Mode::All`]: every Messages request of both traces aligned by (thread label, turn
//!   number, repeat); requests without a partner are listed as unmatched.
//! - [`diff_within`]: each request of one trace against the previous request of the same
//!   thread.
//!
//! Sessions and threads come from the api layer's [`Canonicalizer`] (client session ids,
//! connections, then shared message prefixes), turns from the number of assistant
//! messages in the request.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::gate::GateResult;
use super::request::{diff_parsed, RequestDiff, RequestSide};
use super::resolve::Resolved;
use super::DiffError;
use crate::api::normalize::Normalizer;
use crate::api::view::Canonicalizer;
use crate::api::MessagesRequest;
use crate::trace::{Exchange, Trace};

/// Version of the JSON shape of [`DiffReport`] (`schemas/diff.schema.json`).
pub const REPORT_VERSION: u32 = 1;

/// How two inputs are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// First main-thread request of each (or the picked exchanges).
    First,
    /// All turns aligned by thread and turn.
    All,
}

/// A request without a partner in `--all` mode.
#[derive(Clone, Debug, Serialize)]
pub struct Unmatched {
    /// `a` or `b`.
    pub side: String,
    /// Exchange id.
    pub exchange: u64,
    /// Session label.
    pub session: String,
    /// Thread label.
    pub thread: String,
    /// Turn number.
    pub turn: usize,
}

/// A diff report: one or more request comparisons.
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// [`REPORT_VERSION`].
    pub version: u32,
    /// `first`, `all` or `within`.
    pub mode: String,
    /// Input A as written.
    pub a: String,
    /// Input B as written (`within`: the same trace).
    pub b: String,
    /// The comparisons, in A's order.
    pub comparisons: Vec<RequestDiff>,
    /// Requests without a partner (`all`).
    pub unmatched: Vec<Unmatched>,
    /// Inputs that could not be used: unreadable trace lines, bodies that are not
    /// Messages requests. Non-empty means the run was degraded.
    pub problems: Vec<String>,
    /// `--fail-on` gates and whether they tripped (filled by [`DiffReport::apply_gates`]).
    pub gates: Vec<GateResult>,
}

impl DiffReport {
    /// Evaluate gates against every comparison and store the results.
    pub fn apply_gates(&mut self, gates: &[crate::gate::Gate]) {
        self.gates = gates
            .iter()
            .map(|g| super::gate::evaluate(g, &self.comparisons))
            .collect();
    }

    /// True when any gate tripped.
    pub fn tripped(&self) -> bool {
        self.gates.iter().any(|g| g.tripped)
    }
}

/// A Messages request of a trace with its thread and turn.
pub(crate) struct Item<'t> {
    pub x: &'t Exchange,
    /// The file under a directory input it was read from (`None`: the input itself);
    /// exchange ids repeat across a directory's files, so labels name it.
    pub file: Option<&'t std::path::Path>,
    /// The request body, decoded (spans of `req` index it).
    pub body: Cow<'t, [u8]>,
    pub session: String,
    pub thread: String,
    pub turn: usize,
    pub repeat: usize,
    pub req: MessagesRequest,
}

fn items<'t>(r: &'t Resolved, problems: &mut Vec<String>) -> Vec<Item<'t>> {
    items_of(&r.trace, &r.input, problems)
}

/// The readable Messages requests of a trace with thread and turn; unreadable ones are
/// described in `problems` (prefixed by `input`).
pub(crate) fn items_of<'t>(
    trace: &'t Trace,
    input: &str,
    problems: &mut Vec<String>,
) -> Vec<Item<'t>> {
    for p in &trace.problems {
        problems.push(p.located(&trace.path.display().to_string()));
    }
    let mut canon = Canonicalizer::new();
    let mut out: Vec<Item> = Vec::new();
    // Requests seen so far per (session, thread, turn): the next one's repeat number.
    let mut seen: HashMap<(String, String, usize), usize> = HashMap::new();
    for (i, x) in trace.exchanges.iter().enumerate() {
        if trace.starts_context(i) {
            canon.new_context();
        }
        let v = canon.view(x);
        // ids repeat across the files of a directory: those name the file
        let file = Some(trace.file_of(i)).filter(|f| *f != trace.path);
        if let Some(e) = v.error {
            let at = file.map_or_else(|| input.to_string(), |f| f.display().to_string());
            problems.push(format!("{at}#{}: request body skipped: {e}", x.id));
            continue;
        }
        let Some(c) = v.request else { continue };
        let session = canon.session(v.place.session).label.clone();
        let thread = v.place.thread_label;
        let repeat = {
            let n = seen
                .entry((session.clone(), thread.clone(), c.turn))
                .or_default();
            *n += 1;
            *n - 1
        };
        let body = match c.decoded {
            Some(d) => Cow::Owned(d),
            None => Cow::Borrowed(&x.request.body.bytes[..]),
        };
        out.push(Item {
            x,
            file,
            body,
            session,
            thread,
            turn: c.turn,
            repeat,
            req: c.req,
        });
    }
    out
}

fn side<'t>(r: &Resolved, it: &'t Item) -> RequestSide<'t> {
    let base = r
        .input
        .rsplit_once('#')
        .filter(|_| r.exchange.is_some())
        .map_or(r.input.as_str(), |(p, _)| p);
    it.side(base)
}

impl Item<'_> {
    /// This request as one side of a comparison, labelled `{input}#{id}` (`{file}#{id}`
    /// for a file under a directory input). Its body is the
    /// one the parsed request's spans index (decoded when the request had a content
    /// coding): every comparison builds its sides here.
    pub(crate) fn side(&self, input: &str) -> RequestSide<'_> {
        RequestSide {
            label: match self.file {
                Some(f) => format!("{}#{}", f.display(), self.x.id),
                None => format!("{input}#{}", self.x.id),
            },
            exchange: Some(self.x.id),
            session: Some(self.session.clone()),
            thread: Some(self.thread.clone()),
            headers: self.x.sent_headers(),
            body: &self.body,
        }
    }
}

fn pick<'a, 't>(r: &Resolved, items: &'a [Item<'t>]) -> Result<&'a Item<'t>, DiffError> {
    let err = |message: String| DiffError::Input {
        input: r.input.clone(),
        message,
    };
    if let Some(id) = r.exchange {
        return items.iter().find(|i| i.x.id == id).ok_or_else(|| {
            err(format!("exchange {id} is not a readable POST /v1/messages request; pick one with `agentwire show`"))
        });
    }
    items
        .iter()
        .find(|i| i.thread == "main")
        .or(items.first())
        .ok_or_else(|| err("the trace holds no readable POST /v1/messages request".into()))
}

/// Compare two inputs.
///
/// Errors: an input without any readable Messages request, or a picked `#N` that is not
/// one; `--all` with a picked exchange. Unreadable requests elsewhere only land in
/// [`DiffReport::problems`].
pub fn diff_inputs(
    a: &Resolved,
    b: &Resolved,
    mode: Mode,
    norm: &Normalizer,
) -> Result<DiffReport, DiffError> {
    let mut problems = Vec::new();
    let ia = items(a, &mut problems);
    let ib = items(b, &mut problems);
    let mut report = DiffReport {
        version: REPORT_VERSION,
        mode: if mode == Mode::First { "first" } else { "all" }.into(),
        a: a.input.clone(),
        b: b.input.clone(),
        comparisons: vec![],
        unmatched: vec![],
        problems,
        gates: vec![],
    };
    match mode {
        Mode::First => {
            let (x, y) = (pick(a, &ia)?, pick(b, &ib)?);
            report
                .comparisons
                .push(diff_parsed(&side(a, x), &x.req, &side(b, y), &y.req, norm));
        }
        Mode::All => {
            for r in [a, b] {
                if r.exchange.is_some() {
                    return Err(DiffError::Input {
                        input: r.input.clone(),
                        message: "--all compares whole traces; drop the #N suffix".into(),
                    });
                }
            }
            let key = |i: &Item| (i.session.clone(), i.thread.clone(), i.turn, i.repeat);
            // Keys are unique within a trace (the repeat number tells equal turns apart).
            let in_b: HashMap<_, usize> = ib.iter().enumerate().map(|(k, y)| (key(y), k)).collect();
            let in_a: HashSet<_> = ia.iter().map(key).collect();
            for x in &ia {
                match in_b.get(&key(x)).map(|&k| &ib[k]) {
                    Some(y) => report.comparisons.push(diff_parsed(
                        &side(a, x),
                        &x.req,
                        &side(b, y),
                        &y.req,
                        norm,
                    )),
                    None => report.unmatched.push(unmatched("a", x)),
                }
            }
            for y in &ib {
                if !in_a.contains(&key(y)) {
                    report.unmatched.push(unmatched("b", y));
                }
            }
        }
    }
    Ok(report)
}

fn unmatched(side: &str, i: &Item) -> Unmatched {
    Unmatched {
        side: side.into(),
        exchange: i.x.id,
        session: i.session.clone(),
        thread: i.thread.clone(),
        turn: i.turn,
    }
}

/// Compare each request of a trace with the previous request of the same thread of the
/// same session.
pub fn diff_within(t: &Resolved, norm: &Normalizer) -> DiffReport {
    let mut problems = Vec::new();
    let its = items(t, &mut problems);
    let mut report = DiffReport {
        version: REPORT_VERSION,
        mode: "within".into(),
        a: t.input.clone(),
        b: t.input.clone(),
        comparisons: vec![],
        unmatched: vec![],
        problems,
        gates: vec![],
    };
    // The latest request of each (session, thread) so far.
    let mut last: HashMap<(&str, &str), usize> = HashMap::new();
    for (k, cur) in its.iter().enumerate() {
        let prev = last.insert((&cur.session, &cur.thread), k).map(|p| &its[p]);
        if let Some(prev) = prev {
            report.comparisons.push(diff_parsed(
                &side(t, prev),
                &prev.req,
                &side(t, cur),
                &cur.req,
                norm,
            ));
        }
    }
    report
}
