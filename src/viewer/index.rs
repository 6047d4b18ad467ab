//! The viewer's index: one small row per exchange (the turn list's fields and where its
//! bytes are), built once in a single pass over the input, bodies dropped as it goes. A
//! plain agentwire trace file is indexed by byte offset ([`BodyRef::At`]), in batches on
//! every core ([`super::scan`]), and bodies are read back from the file on demand
//! ([`super::detail`]); other inputs (a directory, a
//! compressed trace, a packet capture, an import) and live exchanges keep the exchange in
//! memory ([`BodyRef::Held`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::analyze::{AnalyzeConfig, Analyzer};
use crate::input::{open_input, InputOptions};
use crate::trace::{Exchange, Record};

use super::model::{BodyRef, Model};
use super::ViewerError;

/// Index an input in one pass, with `analyze` over it (fed in the same pass).
///
/// Errors: the input cannot be opened, is not a format agentwire reads, or a read fails
/// (unreadable lines are not errors: they are [`Model::problems`]).
pub fn open(path: &Path, cfg: AnalyzeConfig) -> Result<Model, ViewerError> {
    let mut model = Model::new(path);
    let mut a = Analyzer::new(cfg);
    if is_plain_trace(path)? {
        super::scan::index_file(path, &mut model, &mut a)?;
    } else {
        index_input(path, &mut model, &mut a)?;
    }
    super::badges::attach(&mut model, a.finish());
    Ok(model)
}

/// True when `path` is a regular, uncompressed agentwire trace file (bodies can be read
/// back from it by offset).
fn is_plain_trace(path: &Path) -> Result<bool, ViewerError> {
    if !path.is_file() {
        return Ok(false);
    }
    let input = open_input(path, &InputOptions::default())?;
    if input.format != Some(crate::import::Format::Trace) {
        return Ok(false);
    }
    let mut head = [0u8; 2];
    let n = std::io::Read::read(
        &mut std::fs::File::open(path).map_err(|e| ViewerError::Open {
            path: path.display().to_string(),
            source: e,
        })?,
        &mut head,
    )
    .unwrap_or(0);
    Ok(!(n == 2 && head == [0x1f, 0x8b]))
}

/// Index any other input, keeping its exchanges in memory.
fn index_input(path: &Path, model: &mut Model, a: &mut Analyzer) -> Result<(), ViewerError> {
    let mut input = open_input(path, &InputOptions::default())?;
    let mut file: Option<PathBuf> = None;
    while let Some(rec) = input.next() {
        let rec = rec?;
        if file.as_deref() != Some(input.file()) {
            file = Some(input.file().to_path_buf());
            a.begin_trace(&input.file().display().to_string());
        }
        let key = input.file().display().to_string();
        match rec {
            Record::Exchange(x) => {
                a.push(&x);
                let x: Arc<Exchange> = Arc::from(x);
                model.push(&x, BodyRef::Held(x.clone()), &key, None);
            }
            Record::Header { context, .. } => {
                model.new_context();
                a.context(&context);
            }
            Record::Bad(p) => {
                model.bad_line(&p);
                a.bad_line(&p);
            }
            Record::Mcp(m) => a.push_mcp(*m),
            Record::Other(_) => {}
        }
    }
    Ok(())
}
