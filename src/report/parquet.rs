//! `analyze --parquet DIR`: the analysis tables as Parquet files for DuckDB, Spark or Trino
//! at fleet scale, written with the `parquet` crate's low-level column writer (no Arrow,
//! no polars: see the note in `docs/analyze.md` on build cost). One directory per table,
//! Hive-partitioned by the client's CLI version and the UTC date
//! (`DIR/requests/cli_version=2.1.304/date=2026-11-29/part-0.parquet`; an unknown version
//! is `unknown`), so DuckDB (`hive_partitioning`), Spark and Trino read `cli_version` and
//! `date` as columns and skip partitions a query filters out. One row group per file;
//! times are `*_us` INT64 (microseconds since the Unix epoch, UTC), money is DOUBLE USD,
//! tokens and counts are INT64, text is UTF8; optional columns may be null.
//!
//! Schema (column: type; plus the partition columns `cli_version` and `date`):
//! - `requests.parquet`: trace int64; file str (the file read: under a directory input,
//!   the file under it); exchange, seq int64; session, thread str; turn, at_us int64;
//!   model, usage, usage_reason str; uncached, read, write_5m, write_1h, output int64 (figures used);
//!   predicted_read, predicted_write, predicted_uncached int64; observed_read,
//!   observed_write int64 (null when not recorded); status str; cause, cause_detail str
//!   (null); miss_tokens int64; miss_cost_usd, cost_usd double (null: unpriced model).
//! - `episodes.parquet`: thread, kind, tool, target str; job str (null); polls, redundant,
//!   after_notified, while_pending int64; first_at_us, last_at_us int64; mean_interval_s,
//!   job_duration_s double (null); tokens int64; cost_usd double; wasted_tokens int64;
//!   wasted_cost_usd double (the redundant polls' calls less those calls' miss extras,
//!   which `requests.miss_cost_usd` holds: `sum(requests.cost_usd) =
//!   sum(requests.miss_cost_usd where miss_tokens > 0) + sum(episodes.wasted_cost_usd) +
//!   useful work`, every dollar once, as the JSON's `summary.cost_attribution`).
//! - `jobs.parquet`: job_reference, kind, thread, tool, state str; exit_code int64 (null);
//!   started_at_us int64; notified_at_us int64 (null); duration_s double (null); polls
//!   int64; duplicate_of, artifact str (null).
//! - `decisions.parquet`: job_reference, observed_state str; artifact_reference str (null);
//!   acceptance_check, acceptance_result, decision str; unresolved_fact,
//!   tool_result_error str (null).
//! - `threads.parquet`: session, thread str; requests, polls, redundant_polls, input, read, write,
//!   output int64; cache_hit_rate double; miss_tokens int64; miss_cost_usd, cost_usd double.
//! - every table, last: schema_version int64; agent str (null); provider, dialect str
//!   (`origin`). Every file's key-value metadata holds the schema version too
//!   ([`SCHEMA_KEY`] = [`SCHEMA_VERSION`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::analyze::Analysis;
use crate::output::OutputError;
use crate::trace::redact::redact_text;

mod column;
mod origin;

use column::{f64s, i64s, opt_f64s, opt_i64s, opt_strs, strs, Col, Values};
pub use origin::{SCHEMA_KEY, SCHEMA_VERSION};

/// The tables written, one `NAME.parquet` file each.
pub const TABLES: [&str; 5] = ["requests", "episodes", "jobs", "decisions", "threads"];

/// Errors writing Parquet tables.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    /// The directory or a file could not be created.
    #[error("cannot write {path}: {source} ({})", crate::output::write_hint(.source))]
    Io {
        /// The path.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A table file exists (and `--force` was not given), or cannot be replaced.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// `--force` would replace a table directory that holds a file agentwire did not
    /// write there.
    #[error("{path} is not part of a table agentwire wrote (its tables hold only cli_version=*/date=*/part-*.parquet); --force replaces whole table directories, so move it elsewhere first")]
    Foreign {
        /// The file or directory inside a table directory.
        path: String,
    },
    /// The parquet writer refused the table.
    #[error("cannot write table {table}: {message}")]
    Parquet {
        /// Table name.
        table: String,
        /// The writer's message.
        message: String,
    },
}

fn schema(table: &str, cols: &[Col]) -> String {
    let fields: Vec<String> = cols
        .iter()
        .map(|c| {
            let rep = if c.required { "required" } else { "optional" };
            let ty = match c.values {
                Values::I64(_) => "int64",
                Values::F64(_) => "double",
                Values::Str(_) => "binary",
            };
            let ann = if matches!(c.values, Values::Str(_)) {
                " (UTF8)"
            } else {
                ""
            };
            format!("{rep} {ty} {}{ann};", c.name)
        })
        .collect();
    format!("message {table} {{ {} }}", fields.join(" "))
}

/// Definition levels and present values of an optional column.
fn split<T: Clone>(v: &[Option<T>]) -> (Vec<i16>, Vec<T>) {
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    let vals = v.iter().flatten().cloned().collect();
    (defs, vals)
}

/// The directory of table `table` in `dir`: `DIR/TABLE/`, Hive-partitioned below.
pub fn table_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(table)
}

/// The Hive partition of a row: `(cli_version, date)`.
type Partition = (String, String);

/// A partition value as Hive writes it in a directory name: characters other than
/// letters, digits and `.-_+` as `%XX` (Hive's `FileUtils.escapePathName`), an empty or
/// unknown value as Hive's null marker; at most [`crate::text::name::MAX_VALUE`] bytes
/// (a longer one is cut and ends with a digest of the whole:
/// [`crate::text::name::bounded`]).
fn partition_value(v: &str) -> String {
    crate::text::name::bounded(&hive_escape(v), crate::text::name::MAX_VALUE)
}

fn hive_escape(v: &str) -> String {
    if v.is_empty() {
        return "__HIVE_DEFAULT_PARTITION__".into();
    }
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The file of one partition of table `table` below `root`.
fn partition_file(root: &Path, table: &str, (version, date): &Partition) -> PathBuf {
    root.join(table)
        .join(format!("cli_version={}", partition_value(version)))
        .join(format!("date={}", partition_value(date)))
        .join("part-0.parquet")
}

/// Check, before any work, that the tables may be written into `dir` (no table directory
/// exists, or `force`).
///
/// Errors: [`ParquetError::Output`] naming the first table directory in the way.
pub fn check_tables(dir: &Path, force: bool) -> Result<(), ParquetError> {
    if dir.is_file() {
        return Err(OutputError::NotADirectory {
            path: dir.display().to_string(),
        }
        .into());
    }
    for t in TABLES {
        let p = table_path(dir, t);
        if !force && p.exists() {
            return Err(OutputError::Exists {
                path: p.display().to_string(),
            }
            .into());
        }
        if p.is_dir() {
            only_agentwire_files(&p)?;
        }
    }
    Ok(())
}

/// Check that a table directory `--force` is about to replace holds only what
/// [`write_tables`] writes: `cli_version=*` directories of `date=*` directories of
/// `part-*.parquet` files.
///
/// Errors: [`ParquetError::Foreign`] naming the first other entry.
fn only_agentwire_files(table: &Path) -> Result<(), ParquetError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ParquetError::Io { path, source }
    };
    let shapes: [fn(&str, bool) -> bool; 3] = [
        |n, dir| dir && n.starts_with("cli_version="),
        |n, dir| dir && n.starts_with("date="),
        |n, dir| !dir && n.starts_with("part-") && n.ends_with(".parquet"),
    ];
    let mut level = vec![table.to_path_buf()];
    for shape in shapes {
        let mut next = Vec::new();
        for d in &level {
            for e in std::fs::read_dir(d).map_err(io(d))? {
                let e = e.map_err(io(d))?;
                let path = e.path();
                let dir = e.file_type().map_err(io(&path))?.is_dir();
                if !shape(&e.file_name().to_string_lossy(), dir) {
                    return Err(ParquetError::Foreign {
                        path: path.display().to_string(),
                    });
                }
                next.push(path);
            }
        }
        level = next;
    }
    Ok(())
}

impl Col {
    /// The same column holding only the rows `rows`.
    fn select(&self, rows: &[usize]) -> Col {
        fn pick<T: Clone>(v: &[Option<T>], rows: &[usize]) -> Vec<Option<T>> {
            rows.iter().map(|&i| v[i].clone()).collect()
        }
        Col {
            name: self.name,
            required: self.required,
            values: match &self.values {
                Values::I64(v) => Values::I64(pick(v, rows)),
                Values::F64(v) => Values::F64(pick(v, rows)),
                Values::Str(v) => Values::Str(pick(v, rows)),
            },
        }
    }
}

/// Write one Parquet file (one row group) holding `cols` at `path`, mode 0600.
fn write_file(path: &Path, table: &str, cols: &[Col]) -> Result<(), ParquetError> {
    let err = |e: parquet::errors::ParquetError| ParquetError::Parquet {
        table: table.to_string(),
        message: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ParquetError::Io {
            path: parent.display().to_string(),
            source,
        })?;
    }
    let file = crate::output::create_in_place(path, true)?;
    let schema = Arc::new(parse_message_type(&schema(table, cols)).map_err(err)?);
    let version =
        parquet::file::metadata::KeyValue::new(SCHEMA_KEY.to_string(), SCHEMA_VERSION.to_string());
    let props = Arc::new(
        WriterProperties::builder()
            .set_key_value_metadata(Some(vec![version]))
            .build(),
    );
    let mut w = SerializedFileWriter::new(file, schema, props).map_err(err)?;
    let mut rg = w.next_row_group().map_err(err)?;
    for c in cols {
        let mut cw = rg
            .next_column()
            .map_err(err)?
            .expect("one writer per schema column");
        let defs_for = |d: Vec<i16>| if c.required { None } else { Some(d) };
        match &c.values {
            Values::I64(v) => {
                let (d, vals) = split(v);
                cw.typed::<Int64Type>()
                    .write_batch(&vals, defs_for(d).as_deref(), None)
                    .map_err(err)?;
            }
            Values::F64(v) => {
                let (d, vals) = split(v);
                cw.typed::<DoubleType>()
                    .write_batch(&vals, defs_for(d).as_deref(), None)
                    .map_err(err)?;
            }
            Values::Str(v) => {
                let (d, vals) = split(v);
                let vals: Vec<ByteArray> = vals
                    .into_iter()
                    .map(|s| ByteArray::from(s.into_bytes()))
                    .collect();
                cw.typed::<ByteArrayType>()
                    .write_batch(&vals, defs_for(d).as_deref(), None)
                    .map_err(err)?;
            }
        }
        cw.close().map_err(err)?;
    }
    rg.close().map_err(err)?;
    let file = w.into_inner().map_err(err)?;
    file.sync_all().map_err(|source| ParquetError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Write table `table` below `root`: one file per partition of its rows (`parts[i]` is
/// row `i`'s); a table without rows gets one empty file in the null partition, so readers
/// still find its schema.
fn write_table(
    root: &Path,
    table: &str,
    cols: &[Col],
    parts: &[Partition],
) -> Result<Vec<PathBuf>, ParquetError> {
    let mut groups: std::collections::BTreeMap<&Partition, Vec<usize>> = Default::default();
    for (i, p) in parts.iter().enumerate() {
        groups.entry(p).or_default().push(i);
    }
    let empty = (String::new(), String::new());
    if groups.is_empty() {
        groups.insert(&empty, Vec::new());
    }
    groups
        .into_iter()
        .map(|(part, rows)| {
            let path = partition_file(root, table, part);
            let cols: Vec<Col> = cols.iter().map(|c| c.select(&rows)).collect();
            write_file(&path, table, &cols)?;
            Ok(path)
        })
        .collect()
}

fn name<T: serde::Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The partition of every row of every table: requests by their own CLI version and UTC
/// date; episodes, jobs (and their decisions) and threads by the CLI version of their
/// thread's first request and the UTC date they started.
fn partitions(a: &Analysis) -> [Vec<Partition>; 5] {
    let version = |v: &Option<String>| v.as_deref().map(redact_text).unwrap_or("unknown".into());
    let date = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d").to_string();
    let mut of_thread: std::collections::HashMap<&str, Partition> = Default::default();
    for r in &a.requests {
        of_thread
            .entry(r.thread.as_str())
            .or_insert_with(|| (version(&r.cli_version), date(&r.at)));
    }
    let thread_version = |t: &str| {
        of_thread
            .get(t)
            .map_or_else(|| "unknown".to_string(), |p| p.0.clone())
    };
    let requests = a
        .requests
        .iter()
        .map(|r| (version(&r.cli_version), date(&r.at)))
        .collect();
    let episodes = a
        .episodes
        .iter()
        .map(|e| (thread_version(&e.thread), date(&e.first_at)))
        .collect();
    let jobs: Vec<Partition> = a
        .jobs
        .iter()
        .map(|j| (thread_version(&j.job.thread_label), date(&j.job.started_at)))
        .collect();
    // One decision record per job, in the jobs' order.
    let decisions = jobs.clone();
    let threads = a
        .threads
        .iter()
        .map(|t| {
            of_thread
                .get(t.thread.as_str())
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    [requests, episodes, jobs, decisions, threads]
}

/// Write every table of `a` below `dir` (created if missing), Hive-partitioned:
/// `DIR/TABLE/cli_version=V/date=YYYY-MM-DD/part-0.parquet`; returns the files written.
/// The tables are written into a temporary directory inside `dir` and each moved into
/// place only once all were written, so a failure leaves `dir` as it was. Existing table
/// directories are replaced only with `force`.
///
/// Errors: [`ParquetError`] naming the file or table.
pub fn write_tables(a: &Analysis, dir: &Path, force: bool) -> Result<Vec<PathBuf>, ParquetError> {
    check_tables(dir, force)?;
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ParquetError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let registering = crate::output::cleanup::hold();
    let staging = tempfile::Builder::new()
        .prefix(".agentwire-parquet-")
        .tempdir_in(dir)
        .map_err(io(dir))?;
    // Removed on SIGINT, SIGTERM or SIGHUP too (a signal skips `staging`'s own drop).
    let _pending = registering.dir(staging.path());
    let mut cols = [
        requests_columns(a),
        episodes_columns(a),
        jobs_columns(a),
        decisions_columns(a),
        threads_columns(a),
    ];
    for (table, shared) in cols.iter_mut().zip(origin::columns(a)) {
        table.extend(shared);
    }
    let mut staged = Vec::new();
    for ((table, cols), parts) in TABLES.iter().zip(&cols).zip(partitions(a)) {
        staged.extend(write_table(staging.path(), table, cols, &parts)?);
    }
    // Every table was written: only now are they moved into place.
    for table in TABLES {
        let dest = table_path(dir, table);
        if dest.exists() {
            if !force {
                return Err(OutputError::Exists {
                    path: dest.display().to_string(),
                }
                .into());
            }
            std::fs::remove_dir_all(&dest).map_err(io(&dest))?;
        }
        std::fs::rename(table_path(staging.path(), table), &dest).map_err(io(&dest))?;
    }
    Ok(staged
        .iter()
        .map(|p| dir.join(p.strip_prefix(staging.path()).unwrap_or(p)))
        .collect())
}

/// Columns of the `requests` table: one row per Messages request: tokens, prediction, miss cause, cost.
fn requests_columns(a: &Analysis) -> Vec<Col> {
    let n = |v: u64| v as i64;
    let r = &a.requests;
    vec![
        i64s("trace", r.iter().map(|x| x.trace as i64)),
        strs("file", r.iter().map(|x| x.file.clone())),
        i64s("exchange", r.iter().map(|x| n(x.exchange))),
        i64s("seq", r.iter().map(|x| x.seq as i64)),
        strs("session", r.iter().map(|x| x.session.clone())),
        strs("thread", r.iter().map(|x| x.thread.clone())),
        i64s("turn", r.iter().map(|x| x.turn as i64)),
        i64s("at_us", r.iter().map(|x| x.at.timestamp_micros())),
        strs("model", r.iter().map(|x| x.model.clone())),
        strs("usage", r.iter().map(|x| x.usage.clone())),
        strs("usage_reason", r.iter().map(|x| x.usage_reason.clone())),
        i64s("uncached", r.iter().map(|x| n(x.tokens.uncached))),
        i64s("read", r.iter().map(|x| n(x.tokens.read))),
        i64s("write_5m", r.iter().map(|x| n(x.tokens.write_5m))),
        i64s("write_1h", r.iter().map(|x| n(x.tokens.write_1h))),
        i64s("output", r.iter().map(|x| n(x.tokens.output))),
        i64s("predicted_read", r.iter().map(|x| n(x.predicted.read))),
        i64s(
            "predicted_write",
            r.iter()
                .map(|x| n(x.predicted.write_5m + x.predicted.write_1h)),
        ),
        i64s(
            "predicted_uncached",
            r.iter().map(|x| n(x.predicted.uncached)),
        ),
        opt_i64s(
            "observed_read",
            r.iter().map(|x| x.observed.map(|o| n(o.read))),
        ),
        opt_i64s(
            "observed_write",
            r.iter().map(|x| x.observed.map(|o| n(o.write()))),
        ),
        strs("status", r.iter().map(|x| x.status.clone())),
        opt_strs(
            "cause",
            r.iter()
                .map(|x| x.cause.as_ref().map(|c| c.name().to_string())),
        ),
        opt_strs("cause_detail", r.iter().map(|x| x.cause_detail.clone())),
        i64s("miss_tokens", r.iter().map(|x| n(x.miss_tokens))),
        opt_f64s("miss_cost_usd", r.iter().map(|x| x.miss_cost_usd)),
        opt_f64s("cost_usd", r.iter().map(|x| x.cost_usd)),
    ]
}

/// Columns of the `episodes` table: one row per polling episode.
fn episodes_columns(a: &Analysis) -> Vec<Col> {
    let n = |v: u64| v as i64;
    let e = &a.episodes;
    vec![
        strs("thread", e.iter().map(|x| x.thread.clone())),
        strs("kind", e.iter().map(|x| x.kind.clone())),
        strs("tool", e.iter().map(|x| x.tool.clone())),
        strs("target", e.iter().map(|x| x.target.clone())),
        opt_strs("job", e.iter().map(|x| x.job.clone())),
        i64s("polls", e.iter().map(|x| x.polls as i64)),
        i64s("redundant", e.iter().map(|x| x.redundant as i64)),
        i64s("after_notified", e.iter().map(|x| x.after_notified as i64)),
        i64s("while_pending", e.iter().map(|x| x.while_pending as i64)),
        i64s(
            "first_at_us",
            e.iter().map(|x| x.first_at.timestamp_micros()),
        ),
        i64s("last_at_us", e.iter().map(|x| x.last_at.timestamp_micros())),
        opt_f64s("mean_interval_s", e.iter().map(|x| x.mean_interval_s)),
        opt_f64s("job_duration_s", e.iter().map(|x| x.job_duration_s)),
        i64s(
            "tokens",
            e.iter().map(|x| n(x.tokens.input() + x.tokens.output)),
        ),
        f64s("cost_usd", e.iter().map(|x| x.cost_usd)),
        i64s("wasted_tokens", e.iter().map(|x| n(x.wasted_tokens))),
        f64s("wasted_cost_usd", e.iter().map(|x| x.wasted_cost_usd)),
    ]
}

/// Columns of the `jobs` table: one row per background job.
fn jobs_columns(a: &Analysis) -> Vec<Col> {
    let j = &a.jobs;
    vec![
        strs("job_reference", j.iter().map(|x| x.job.reference.clone())),
        strs("kind", j.iter().map(|x| name(x.job.kind))),
        strs("thread", j.iter().map(|x| x.job.thread_label.clone())),
        strs("tool", j.iter().map(|x| x.job.tool.clone())),
        strs("state", j.iter().map(|x| x.job.state.name().to_string())),
        opt_i64s("exit_code", j.iter().map(|x| x.job.exit_code)),
        i64s(
            "started_at_us",
            j.iter().map(|x| x.job.started_at.timestamp_micros()),
        ),
        opt_i64s(
            "notified_at_us",
            j.iter()
                .map(|x| x.job.notified_at.map(|t| t.timestamp_micros())),
        ),
        opt_f64s("duration_s", j.iter().map(|x| x.duration_s)),
        i64s("polls", j.iter().map(|x| x.job.polls as i64)),
        opt_strs("duplicate_of", j.iter().map(|x| x.job.duplicate_of.clone())),
        opt_strs("artifact", j.iter().map(|x| x.job.artifact.clone())),
    ]
}

/// Columns of the `decisions` table: one decision record per job.
fn decisions_columns(a: &Analysis) -> Vec<Col> {
    let d = &a.decisions;
    vec![
        strs("job_reference", d.iter().map(|x| x.job_reference.clone())),
        strs("observed_state", d.iter().map(|x| x.observed_state.clone())),
        opt_strs(
            "artifact_reference",
            d.iter().map(|x| x.artifact_reference.clone()),
        ),
        strs(
            "acceptance_check",
            d.iter().map(|x| x.acceptance_check.clone()),
        ),
        strs(
            "acceptance_result",
            d.iter().map(|x| x.acceptance_result.clone()),
        ),
        strs("decision", d.iter().map(|x| x.decision.clone())),
        opt_strs(
            "unresolved_fact",
            d.iter().map(|x| x.unresolved_fact.clone()),
        ),
        opt_strs(
            "tool_result_error",
            d.iter().map(|x| x.tool_result_error.clone()),
        ),
    ]
}

/// Columns of the `threads` table: one row per thread.
fn threads_columns(a: &Analysis) -> Vec<Col> {
    let n = |v: u64| v as i64;
    let t = &a.threads;
    vec![
        strs("session", t.iter().map(|x| x.session.clone())),
        strs("thread", t.iter().map(|x| x.thread.clone())),
        i64s("requests", t.iter().map(|x| x.requests as i64)),
        i64s("polls", t.iter().map(|x| x.polls as i64)),
        i64s(
            "redundant_polls",
            t.iter().map(|x| x.redundant_polls as i64),
        ),
        i64s("input", t.iter().map(|x| n(x.tokens.input()))),
        i64s("read", t.iter().map(|x| n(x.tokens.read))),
        i64s("write", t.iter().map(|x| n(x.tokens.write()))),
        i64s("output", t.iter().map(|x| n(x.tokens.output))),
        f64s("cache_hit_rate", t.iter().map(|x| x.cache_hit_rate)),
        i64s("miss_tokens", t.iter().map(|x| n(x.miss_tokens))),
        f64s("miss_cost_usd", t.iter().map(|x| x.miss_cost_usd)),
        f64s("cost_usd", t.iter().map(|x| x.cost_usd)),
    ]
}
