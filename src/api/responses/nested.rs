//! Tools declared inside another tool's description. Codex's code mode (measured on Codex
//! 0.165.0 and 0.171.0) sends one custom tool, `exec`, whose JavaScript may call the
//! functions its description declares in TypeScript, each under a heading ``### `name` ``;
//! those functions (`exec_command`, `write_stdin`, `apply_patch`, …) never appear as tools
//! of their own. Reading the headings lets a diff say that `exec_command` changed rather
//! than that a 14 KB description did.
//!
//! Rule: a declaration starts at a line `### `NAME`` (NAME a tool name: letters, digits,
//! `_`, `-`, `.`) and runs to the next heading line (`#` to `######`) or the end.

use super::super::request::NestedTool;

/// The declarations in `description`, in order (none for an ordinary description).
pub fn declarations(description: &str) -> Vec<NestedTool> {
    let mut out: Vec<NestedTool> = Vec::new();
    let mut open: Option<(String, usize)> = None;
    let mut at = 0;
    for line in description.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let l = line.trim_end();
        if !l.starts_with('#') {
            continue;
        }
        if let Some((name, from)) = open.take() {
            out.push(NestedTool {
                name,
                range: from..start,
            });
        }
        open = declared_name(l).map(|n| (n.to_string(), start));
    }
    if let Some((name, from)) = open {
        out.push(NestedTool {
            name,
            range: from..description.len(),
        });
    }
    out
}

/// The name of a ``### `name` `` heading.
fn declared_name(line: &str) -> Option<&str> {
    let name = line.strip_prefix("### `")?.strip_suffix('`')?;
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    ok.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_heading_starts_a_declaration_that_runs_to_the_next_heading() {
        let d = "Run JavaScript.\n\n## functions\n\n### `exec_command`\nfunction exec_command(a: A): R;\n\n### `write_stdin`\nfunction write_stdin(b: B);\n## clock\n### `clock__curr_time`\nx\n### not a name\ny";
        let n = declarations(d);
        let names: Vec<&str> = n.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["exec_command", "write_stdin", "clock__curr_time"]);
        assert_eq!(
            &d[n[0].range.clone()],
            "### `exec_command`\nfunction exec_command(a: A): R;\n\n"
        );
        assert_eq!(
            &d[n[1].range.clone()],
            "### `write_stdin`\nfunction write_stdin(b: B);\n"
        );
        // The last declaration ends at the next heading, even one that declares nothing.
        assert_eq!(&d[n[2].range.clone()], "### `clock__curr_time`\nx\n");
        assert_eq!(
            n[1].bytes(),
            "### `write_stdin`\nfunction write_stdin(b: B);\n".len()
        );
        assert!(declarations("A plain description.\n# Usage\n").is_empty());
    }
}
