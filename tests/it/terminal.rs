//! Terminal conventions: colour on stdout and progress on stderr only when they are
//! terminals and `NO_COLOR` is unset (no-color.org); a pipe or a log file never sees escape
//! sequences or carriage returns. Terminals are real pseudo-terminals made by `script(1)`.

use std::process::Command;

use crate::common::*;

/// Run `agentwire ARGS` on a pseudo-terminal (stdout and stderr both), with extra env;
/// returns everything the terminal received.
fn on_terminal(args: &[&str], env: &[(&str, &str)]) -> String {
    let cmd = std::iter::once(bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let o = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .output()
        .expect("script(1) from util-linux");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Run `agentwire ARGS` with stdout and stderr piped; returns (stdout, stderr).
fn piped(args: &[&str]) -> (String, String) {
    let o = Command::new(bin())
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const ESC: char = '\u{1b}';

#[test]
fn diff_colours_a_terminal_but_not_a_pipe_nor_with_no_color() {
    let sample = repo().join("captures/sample-session.jsonl");
    let (a, b) = (
        format!("{}#0", sample.display()),
        format!("{}#1", sample.display()),
    );
    let args = ["diff", a.as_str(), b.as_str()];
    let tty = on_terminal(&args, &[]);
    // exchange 1 adds two tools to exchange 0: the added lines are green
    assert!(tty.contains("\u{1b}[32m"), "{tty}");
    let no_color = on_terminal(&args, &[("NO_COLOR", "1")]);
    assert!(!no_color.contains(ESC), "{no_color}");
    let (out, err) = piped(&args);
    assert!(!out.contains(ESC) && !err.contains(ESC), "{out}{err}");
    // the same report either way, once the colour codes are gone
    assert!(no_color.contains("tools"), "{no_color}");
}

#[test]
fn progress_spins_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl").display().to_string();
    let run = [
        "record", "--route", "base-url", "--force", "-o", &out, "--", "sleep", "1",
    ];
    // a one-second run: the spinner redraws its line (\r, erase line) several times
    let tty = on_terminal(&run, &[]);
    assert!(tty.matches("\r\u{1b}[2K").count() >= 3, "{tty:?}");
    let no_color = on_terminal(&run, &[("NO_COLOR", "1")]);
    assert!(!no_color.contains("\u{1b}[2K"), "{no_color:?}");
    let (stdout, stderr) = piped(&run);
    for s in [&stdout, &stderr] {
        assert!(!s.contains(ESC) && !s.contains('\r'), "{s:?}");
    }
    // the summary line is still there, plain
    assert!(stdout.contains("sleep: exit 0"), "{stdout}");
}
