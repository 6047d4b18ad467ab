//! The template machinery of the shareable reports (minijinja): the templates compiled
//! into the binary, the filters they use, and the Content-Security-Policy of the HTML
//! pages.
//!
//! HTML templates (`*.html`) escape every value by default (minijinja's auto-escaping);
//! only the page's own stylesheet and script and the SVG charts (whose text plotters
//! escapes) are inserted as markup. The page allows nothing but its own stylesheet and
//! script, identified by their SHA-256 (`default-src 'none'`): no network access, no
//! inline event handlers, no `javascript:` URLs, even if escaping were ever missed.
//!
//! Markdown templates (`*.md`) use the `md` filter for text (Markdown punctuation and
//! HTML escaped with backslashes), `code` for inline code and `fence` for code blocks, so
//! recorded text can neither close a block nor start HTML (the rules are
//! [`crate::text::markdown`]'s, rule 2).

use base64::Engine;
use minijinja::{Environment, Value};
use sha2::{Digest, Sha256};

use crate::text::fmt::{pct_of_rate, plural, thousands, usd_or_unpriced};
use crate::text::markdown::{fence, md_code, md_escape};
use crate::text::{printable, printable_lines};

/// The stylesheet of every HTML report.
pub const CSS: &str = include_str!("templates/report.css");
/// The script of every HTML report: sortable tables and pagination.
pub const JS: &str = include_str!("templates/report.js");

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("macros.html", include_str!("templates/macros.html")),
    ("diff.html", include_str!("templates/diff.html")),
    ("diff.md", include_str!("templates/diff.md")),
    ("audit.html", include_str!("templates/audit.html")),
    ("audit.md", include_str!("templates/audit.md")),
    ("history.html", include_str!("templates/history.html")),
    ("history.md", include_str!("templates/history.md")),
    ("matrix.html", include_str!("templates/matrix.html")),
    ("prompt.md", include_str!("templates/prompt.md")),
];

fn sha256_b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s.as_bytes()))
}

/// The Content-Security-Policy of the HTML reports: nothing but the page's own
/// stylesheet and script (by hash) and `data:` images.
pub fn csp() -> String {
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(CSS),
        sha256_b64(JS)
    )
}

fn num(v: Value) -> String {
    match i64::try_from(v.clone()) {
        Ok(n) => thousands(n),
        Err(_) => v.to_string(),
    }
}

fn signed(v: Value) -> String {
    match i64::try_from(v.clone()) {
        Ok(0) => "0".into(),
        Ok(n) if n > 0 => format!("+{}", thousands(n)),
        Ok(n) => thousands(n),
        Err(_) => v.to_string(),
    }
}

/// The environment with every report template and filter.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .expect("default delimiters"),
    );
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // Every string from a report reaches the page through the printable filter (newlines
    // kept): a recorded escape sequence or bidi override never reaches a terminal that
    // shows the report, and shows as a visible escape in a browser.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if !value.is_safe() => {
            minijinja::escape_formatter(out, state, &Value::from(printable_lines(s)))
        }
        _ => minijinja::escape_formatter(out, state, value),
    });
    for (name, src) in TEMPLATES {
        env.add_template(name, src).expect("report templates parse");
    }
    env.add_filter("md", |s: String| md_escape(&s));
    env.add_filter("code", |s: String| md_code(&s));
    env.add_filter("fence", |s: String| fence(&s));
    env.add_filter("printable", |s: String| printable(&s));
    env.add_filter("num", num);
    env.add_filter("signed", signed);
    env.add_filter("usd", usd_or_unpriced);
    env.add_filter("pct", pct_of_rate);
    // `{{ n|count("tool") }}`: "1 tool", "2 tools" (the one plural rule, `text::fmt::plural`).
    env.add_filter("count", |n: u64, noun: String| plural(n, &noun));
    env
}

/// Render template `name` with `ctx`, adding the page's stylesheet, script and CSP for
/// HTML templates.
///
/// Panics only on a template bug (a missing template or variable); the templates are
/// part of the binary and covered by tests.
pub fn render<S: serde::Serialize>(name: &str, ctx: S) -> String {
    let env = environment();
    let tmpl = env.get_template(name).expect("template exists");
    let page = minijinja::context! {
        csp => csp(),
        css => Value::from_safe_string(CSS.to_string()),
        js => Value::from_safe_string(JS.to_string()),
        ..Value::from(minijinja::value::Serde(&ctx))
    };
    match tmpl.render(page) {
        Ok(s) => s,
        Err(e) => panic!("report template {name} failed: {e:#}"),
    }
}

/// An SVG chart for a template: the markup itself (plotters escaped its text), or the
/// error as escaped text.
pub fn svg(chart: Result<String, String>) -> Value {
    match chart {
        Ok(svg) => Value::from_safe_string(svg),
        Err(e) => Value::from(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(thousands(47794), "47,794");
        assert_eq!(thousands(-19918), "-19,918");
        assert_eq!(thousands(999), "999");
        assert_eq!(signed(Value::from(1450)), "+1,450");
        assert_eq!(signed(Value::from(0)), "0");
    }

    #[test]
    fn csp_hashes_the_shipped_stylesheet_and_script() {
        let c = csp();
        assert!(c.starts_with("default-src 'none';"));
        assert!(c.contains(&format!("'sha256-{}'", sha256_b64(JS))));
        assert!(!c.contains("unsafe"));
    }
}
