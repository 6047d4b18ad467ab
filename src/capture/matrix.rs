//! The version × settings matrix: plan every combination of CLI versions, environment
//! values and routes, and record them (several at a time: each run has its own server and
//! sandbox, so runs cannot see each other).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::npm::{self, CliSpec};
use super::record::{self, RecordConfig, RecordError, RecordOutcome, Target};
use super::route::Route;
use super::server::ServerConfig;

/// One environment dimension: a variable and the values to try (`unset` removes it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvAxis {
    /// Variable name.
    pub name: String,
    /// Values, `None` for unset.
    pub values: Vec<Option<String>>,
}

impl EnvAxis {
    /// Parse `K=V1,V2,...` (`unset` is a value that removes K).
    pub fn parse(s: &str) -> Result<EnvAxis, RecordError> {
        let (k, vs) = s
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| RecordError::BadEnv(s.into()))?;
        Ok(EnvAxis {
            name: k.into(),
            values: vs
                .split(',')
                .map(|v| (v != "unset").then(|| v.to_string()))
                .collect(),
        })
    }
}

/// One run of the matrix.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Label, e.g. `claude-code@2.1.304 ENABLE_TOOL_SEARCH=true route=base-url`.
    pub label: String,
    /// CLI to run.
    pub spec: CliSpec,
    /// Environment for this run.
    pub env: Vec<(String, Option<String>)>,
    /// Route for this run (`None`: the CLI's default route).
    pub route: Option<Route>,
}

/// Every combination, versions outermost, then env axes in order, then routes (none
/// given: each CLI's default route).
pub fn plan(specs: &[CliSpec], axes: &[EnvAxis], routes: &[Route]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = specs
        .iter()
        .map(|s| Cell {
            label: format!("{}@{}", s.name, s.version),
            spec: s.clone(),
            env: Vec::new(),
            route: None,
        })
        .collect();
    for axis in axes {
        cells = cells
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.label
                        .push_str(&format!(" {}={}", axis.name, label_value(&axis.name, v)));
                    c.env.push((axis.name.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    if routes.is_empty() {
        return cells;
    }
    let show_route = routes.len() > 1;
    cells
        .into_iter()
        .flat_map(|c| {
            routes.iter().map(move |r| {
                let mut c = c.clone();
                c.route = Some(*r);
                if show_route {
                    c.label.push_str(&format!(" route={}", r.name()));
                }
                c
            })
        })
        .collect()
}

/// Longest value shown whole in a label, in bytes.
const MAX_LABEL_VALUE: usize = 48;
/// Longest file name [`file_name`] makes, in bytes (file systems allow 255).
const MAX_FILE_NAME: usize = 160;

/// How a cell's label shows an environment value: `unset`; `fp-XXXXXXXX` (the
/// fingerprint of [`crate::trace::redact::marker`]) for a value the redaction would hide
/// (a secret-named variable such as `GITHUB_TOKEN`, a key-shaped value, URL userinfo), so
/// the value never reaches file names, tables or messages; a long value cut to its first
/// 32 characters and the fingerprint of the whole.
fn label_value(name: &str, v: &Option<String>) -> String {
    use crate::trace::redact::{fingerprint, redact_env};
    let Some(v) = v else {
        return "unset".into();
    };
    if redact_env(name, v) != *v {
        return format!("fp-{}", fingerprint(v));
    }
    if v.len() <= MAX_LABEL_VALUE {
        return v.clone();
    }
    let head: String = v.chars().take(32).collect();
    format!("{head}…fp-{}", fingerprint(v))
}

/// File name for a cell's trace inside the matrix directory: the label with every
/// character but ASCII letters, digits, `.` and `=` as `_`, at most 160
/// bytes (a longer one keeps its start and the fingerprint of the whole label).
pub fn file_name(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '=' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.len() <= MAX_FILE_NAME {
        return format!("{s}.jsonl");
    }
    let fp = crate::trace::redact::fingerprint(label);
    format!("{}_fp-{fp}.jsonl", &s[..MAX_FILE_NAME - 12])
}

/// Record every cell into `dir`, at most `parallel` at a time; results in cell order.
pub async fn run(
    cells: &[Cell],
    dir: &Path,
    args: &[String],
    server: &ServerConfig,
    parallel: usize,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
) -> Vec<(PathBuf, Result<RecordOutcome, RecordError>)> {
    // Fetch each version once, before the parallel runs; a version that cannot be fetched
    // fails its own cells only (the others still record).
    let mut fetched: Vec<(&CliSpec, Option<String>)> = Vec::new();
    for c in cells {
        if !fetched.iter().any(|(s, _)| *s == &c.spec) {
            let p = progress.clone();
            let spec = c.spec.clone();
            let r = tokio::task::spawn_blocking(move || npm::ensure(&spec, &*p)).await;
            let failed = match r {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) => Some(e.to_string()),
            };
            fetched.push((&c.spec, failed));
        }
    }
    let fetch_error = |spec: &CliSpec| {
        fetched
            .iter()
            .find(|(s, _)| *s == spec)
            .and_then(|(_, e)| e.clone())
    };
    let sem = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = Vec::new();
    for c in cells {
        let out = dir.join(file_name(&c.label));
        if let Some(detail) = fetch_error(&c.spec) {
            let spec = c.label.clone();
            let e = RecordError::Fetch {
                spec,
                reason: detail,
            };
            tasks.push(tokio::spawn(async move { (out, Err(e)) }));
            continue;
        }
        let cfg = RecordConfig {
            target: Target::Cli(c.spec.clone()),
            args: args.to_vec(),
            env: c.env.clone(),
            server: server.clone(),
            output: out.clone(),
            timeout: std::time::Duration::from_secs(300),
            label: Some(c.label.clone()),
            route: c.route,
            // The matrix directory's own check decided what may be replaced.
            force: true,
        };
        let (sem, p, label) = (sem.clone(), progress.clone(), c.label.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = sem.acquire_owned().await.expect("semaphore open");
            p(&format!("recording {label}"));
            let quiet = |_: &str| {};
            (out, record::record(cfg, &quiet).await)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        match t.await {
            Ok(r) => results.push(r),
            Err(e) => results.push((
                PathBuf::new(),
                Err(RecordError::Sandbox(std::io::Error::other(e.to_string()))),
            )),
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_the_cartesian_product_in_order() {
        let specs = vec![
            CliSpec::parse("claude-code@2.1.303").unwrap(),
            CliSpec::parse("claude-code@2.1.304").unwrap(),
        ];
        let axes = vec![EnvAxis::parse("ENABLE_TOOL_SEARCH=unset,true,false").unwrap()];
        let cells = plan(&specs, &axes, &[Route::BaseUrl]);
        let labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "claude-code@2.1.303 ENABLE_TOOL_SEARCH=unset",
                "claude-code@2.1.303 ENABLE_TOOL_SEARCH=true",
                "claude-code@2.1.303 ENABLE_TOOL_SEARCH=false",
                "claude-code@2.1.304 ENABLE_TOOL_SEARCH=unset",
                "claude-code@2.1.304 ENABLE_TOOL_SEARCH=true",
                "claude-code@2.1.304 ENABLE_TOOL_SEARCH=false",
            ]
        );
        assert_eq!(cells[0].env, [("ENABLE_TOOL_SEARCH".to_string(), None)]);
        let cells = plan(&specs, &[], &[Route::FirstParty, Route::BaseUrl]);
        assert_eq!(cells.len(), 4);
        assert_eq!(cells[1].label, "claude-code@2.1.303 route=base-url");
        assert_eq!(cells[1].route, Some(Route::BaseUrl));
    }

    #[test]
    fn a_secret_env_value_is_a_fingerprint_in_labels_and_file_names() {
        // Before: `--env GITHUB_TOKEN=ghp_…` made the label `GITHUB_TOKEN=ghp_…`, and so
        // the trace's file name, the table's run column and the error lines.
        let spec = vec![CliSpec::parse("claude-code@2.1.304").unwrap()];
        let v = "ghp_0123456789abcdefSECRET";
        let axes = vec![
            EnvAxis::parse(&format!("GITHUB_TOKEN={v}")).unwrap(),
            EnvAxis::parse("PLAIN=sk-ant-api03-abcdefabcdefabcdef").unwrap(),
        ];
        let cells = plan(&spec, &axes, &[]);
        let fp = crate::trace::redact::fingerprint(v);
        assert!(
            cells[0].label.contains(&format!("GITHUB_TOKEN=fp-{fp}")),
            "{}",
            cells[0].label
        );
        assert!(!cells[0].label.contains("SECRET") && !cells[0].label.contains("abcdef"));
        assert_eq!(
            cells[0].env[0].1.as_deref(),
            Some(v),
            "the run gets the value"
        );
        assert!(!file_name(&cells[0].label).contains("SECRET"));
    }

    #[test]
    fn a_long_env_value_makes_a_bounded_file_name() {
        // Before: a 300-byte value made a 330-byte file name (ENAMETOOLONG, the run failed).
        let spec = vec![CliSpec::parse("claude-code@2.1.304").unwrap()];
        let axes = vec![EnvAxis::parse(&format!("MODEL={}", "m".repeat(300))).unwrap()];
        let label = &plan(&spec, &axes, &[])[0].label;
        assert!(label.len() < 100, "{label}");
        assert!(file_name(&"x".repeat(400)).len() <= MAX_FILE_NAME + 6);
        assert_ne!(file_name(&"x".repeat(400)), file_name(&"x".repeat(401)));
    }
}
