//! Script injection through recorded text: traces whose context, headers, system prompt,
//! tool names, tool descriptions, schema properties and tool inputs carry markup and
//! script. The HTML reports, loaded in headless Chromium, run nothing (no dialog, no
//! console message, no network request, no element with an event handler or a
//! `javascript:` link, only the page's own script) and show every payload as text; the
//! Markdown reports, parsed by a CommonMark renderer, contain no raw HTML.

use std::path::Path;

use serde_json::json;

use agentwire::trace::{Context, TraceWriter};

use crate::common::agentwire_ok;
use crate::common_chromium::Browser;
use crate::hand_trace::{text, tool_result, tool_use, Conv, TraceBuilder};

/// Payloads that would run, load or restyle something if they reached the page as markup.
pub const PAYLOADS: &[&str] = &[
    "<script>alert(1)</script>",
    "</style><script>alert(2)</script>",
    "<img src=x onerror=alert(3)>",
    "\"><svg onload=alert(4)>",
    "<a href=\"javascript:alert(5)\">click</a>",
    "<img src=\"http://127.0.0.1:9/leak.png\">",
    "</textarea></title><script>alert(6)</script>",
    "<iframe src=\"javascript:alert(7)\"></iframe>",
];

fn hostile_trace(path: &Path, version: &str, extra_desc: &str) {
    let mut conv = Conv::new("claude-sonnet-4-5");
    conv.system = vec![
        json!({"type": "text", "text": format!("You are {}. {}", PAYLOADS[0], PAYLOADS[1])}),
        // Every line differs between A and B, so the block's diff shows each payload.
        json!({"type": "text", "text": PAYLOADS.iter().map(|p| format!("{version}: {p}")).collect::<Vec<_>>().join("\n")}),
    ];
    conv.tools = vec![
        json!({"name": PAYLOADS[2], "description": format!("{} {extra_desc}", PAYLOADS[3]),
               "input_schema": {"type": "object", "properties": {
                   PAYLOADS[4]: {"type": "string", "description": PAYLOADS[5],
                                 "enum": [PAYLOADS[6]], "default": PAYLOADS[7]}}}}),
        json!({"name": "Bash", "description": format!("runs {extra_desc}"), "input_schema": {}}),
    ];
    let mut b = TraceBuilder::default();
    conv.user(vec![text(60, 'u')]);
    b.send_text(&conv, 0.0);
    // The same hostile call three times: a poll episode named after the payloads.
    for i in 0..3 {
        let id = format!("toolu_{i}");
        conv.assistant(vec![tool_use(&id, PAYLOADS[2], json!({"q": PAYLOADS[0]}))]);
        conv.user(vec![tool_result(&id, PAYLOADS[3], false)]);
        b.send_text(&conv, 1.0 + i as f64);
    }
    for x in &mut b.exchanges {
        x.request.headers.push((
            "user-agent".into(),
            format!("claude-cli/{version} {}", PAYLOADS[0]),
        ));
        x.request
            .headers
            .push(("anthropic-beta".into(), PAYLOADS[2].replace(',', " ")));
    }
    let mut ctx = Context::new();
    ctx.cli = Some(PAYLOADS[1].into());
    ctx.cli_version = Some(format!("{version}{}", PAYLOADS[3]));
    ctx.env
        .insert("ENABLE_TOOL_SEARCH".into(), PAYLOADS[4].into());
    let mut w = TraceWriter::create(path, &ctx).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
}

/// Two hostile traces (A and B differ in their descriptions) in `dir`.
pub fn hostile_pair(dir: &Path) -> (String, String) {
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    hostile_trace(&a, "1.0.0", "old");
    hostile_trace(&b, "1.0.1", PAYLOADS[5]);
    (a.display().to_string(), b.display().to_string())
}

/// Must-show 2: recorded markup in every place a trace holds text never runs in the HTML
/// reports and shows as text (run by `report_html`'s one-browser test).
pub fn injected_markup_never_runs(br: &mut Browser) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = hostile_pair(dir.path());
    let diff = dir.path().join("diff.html");
    let audit = dir.path().join("audit.html");
    agentwire_ok(&["report", "diff", &a, &b, "-o", diff.to_str().unwrap()]);
    agentwire_ok(&["report", "analyze", &a, &b, "-o", audit.to_str().unwrap()]);
    br.resize(1200, 900);
    // The diff shows every payload (prompt lines, tools, schema); the audit the ones in
    // names, tool inputs and the recording context.
    for (page, shown) in [(&diff, PAYLOADS), (&audit, &PAYLOADS[..5])] {
        let url = br.open(page);
        // Open every collapsed section so their text is part of the check.
        br.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
        let m = br.misdeeds(&url);
        assert!(m.none(), "{}: {m:#?}", page.display());
        assert_eq!(
            br.eval("document.scripts.length"),
            json!(1),
            "{}",
            page.display()
        );
        let handlers = br.eval(
            "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))",
        );
        assert_eq!(handlers, json!([]), "{}", page.display());
        let links = br.eval(
            "document.querySelectorAll('a, iframe, img, embed, object, link[href], base').length",
        );
        assert_eq!(links, json!(0), "{}", page.display());
        let text = br.eval("document.body.textContent");
        let text = text.as_str().unwrap();
        for p in shown {
            assert!(
                text.contains(p),
                "{}: payload {p:?} is not shown as text",
                page.display()
            );
        }
        let title = br.eval("document.title");
        assert!(title.as_str().unwrap().contains(PAYLOADS[1]));
    }
}
