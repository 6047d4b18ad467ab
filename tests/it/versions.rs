//! CLI specs resolved through the real npm registry: `claude-code@latest` records the
//! version `npm view` reports as latest; `claude-code@A..B` names every published version
//! between A and B. The expected versions come from `npm view` itself, run here.

use std::process::Command;

use agentwire::capture::versions;
use agentwire::input::open_trace;

use crate::common::*;

/// `npm view ARGS…` as the user would run it, trimmed.
fn npm_view(args: &[&str]) -> String {
    let o = Command::new("npm")
        .arg("view")
        .args(args)
        .output()
        .expect("npm runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn record_claude_code_at_latest_records_the_version_npm_reports_as_latest() {
    let latest = npm_view(&["@anthropic-ai/claude-code", "dist-tags.latest"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("latest.jsonl");
    let o = Command::new(bin())
        .args([
            "record",
            "--cli",
            "claude-code@latest",
            "--route",
            "base-url",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_key(&out);
    let t = open_trace(&out).unwrap();
    assert_eq!(t.context.cli_version.as_deref(), Some(latest.as_str()));
    assert_eq!(t.context.cli_tag.as_deref(), Some("latest"));
    // the CLI itself says which version it is in every request's user-agent
    let x = t.exchanges.iter().find(|x| x.is_messages()).unwrap();
    let ua = x
        .request
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
        .map(|(_, v)| v.clone())
        .unwrap();
    assert!(ua.starts_with(&format!("claude-cli/{latest} ")), "{ua}");
    let said = String::from_utf8(o.stdout).unwrap();
    assert!(
        said.starts_with(&format!("claude-code@latest ({latest}): exit 0")),
        "{said}"
    );
}

#[test]
fn an_unknown_dist_tag_is_a_usage_error_listing_the_tags() {
    let o = Command::new(bin())
        .args(["record", "--cli", "claude-code@nonesuch", "-o"])
        .arg(tempfile::tempdir().unwrap().path().join("t.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"nonesuch\"") && err.contains("latest ("),
        "{err}"
    );
    // a range where one version is wanted
    let o = Command::new(bin())
        .args(["record", "--cli", "claude-code@2.1.303..2.1.304"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("matrix --cli"));
}

/// Exact versions `M.m.p` without a pre-release part, as (M, m, p).
fn release(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.split('.').map(|p| p.parse::<u64>().ok());
    let t = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some(t)
}

#[test]
fn a_range_names_every_version_published_for_this_platform_between_its_ends() {
    let package = format!(
        "@anthropic-ai/claude-code-{}",
        agentwire::capture::npm::platform()
    );
    let listed: Vec<String> =
        serde_json::from_str(&npm_view(&[&package, "versions", "--json"])).unwrap();
    let mut want: Vec<(u64, u64, u64)> = listed
        .iter()
        .filter_map(|v| release(v))
        .filter(|v| (2, 1, 300) <= *v && *v <= (2, 1, 320))
        .collect();
    want.sort();
    let got: Vec<(u64, u64, u64)> = versions::resolve_range("claude-code@2.1.300..2.1.320")
        .unwrap()
        .iter()
        .map(|s| release(&s.version).unwrap())
        .collect();
    assert!(got.len() >= 2, "{got:?}");
    assert_eq!(got, want);
    // an end may be a dist-tag: up to latest ends at the version latest names
    let latest = npm_view(&["@anthropic-ai/claude-code", "dist-tags.latest"]);
    let up = versions::resolve_range("claude-code@2.1.320..latest").unwrap();
    assert_eq!(up.last().unwrap().version, latest);
    let first = listed
        .iter()
        .filter_map(|v| release(v))
        .filter(|v| *v >= (2, 1, 320))
        .min()
        .unwrap();
    assert_eq!(release(&up.first().unwrap().version), Some(first));
}
