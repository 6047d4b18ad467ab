//! Shell completions and man pages, generated from the clap definitions: bash sources the
//! script and completes real words; `man -l` renders the pages.

use std::process::Command;

use crate::common::*;

/// What bash's completion offers for the words typed so far (the last one being completed).
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = Command::new(bin())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(script.status.success());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentwire.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prog = format!(
        "source '{}'\n\
         COMP_WORDS=({})\nCOMP_CWORD={cword}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n\
         _agentwire agentwire \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        path.display(),
        quoted.join(" ")
    );
    let o = Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(prog)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_subcommands_and_their_flags() {
    // `agentwire sh<TAB>` → show (the only subcommand starting with "sh")
    assert_eq!(bash_complete(&["agentwire", "sh"]), ["show"]);
    // `agentwire ma<TAB>` → man and matrix
    let mut m = bash_complete(&["agentwire", "ma"]);
    m.sort();
    assert_eq!(m, ["man", "matrix"]);
    // `agentwire diff --fa<TAB>` → --fail-on
    assert_eq!(bash_complete(&["agentwire", "diff", "--fa"]), ["--fail-on"]);
    // `agentwire completions <TAB>` offers the shells
    let shells = bash_complete(&["agentwire", "completions", ""]);
    for sh in ["bash", "zsh", "fish", "powershell"] {
        assert!(shells.iter().any(|s| s == sh), "{shells:?}");
    }
}

/// `agentwire completions SHELL` written to a file in `dir`.
fn script(shell: &str, dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let o = Command::new(bin())
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(o.status.success(), "{shell}");
    let path = dir.join(name);
    std::fs::write(&path, &o.stdout).unwrap();
    path
}

#[test]
fn fish_completes_subcommands_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let path = script("fish", dir.path(), "agentwire.fish");
    // fish's own `complete -C` lists what TAB would offer: one "word<TAB>description" line each
    let complete = |line: &str| -> Vec<String> {
        let o = Command::new("fish")
            .arg("--no-config")
            .arg("-c")
            .arg(format!("source '{}'; complete -C '{line}'", path.display()))
            .output()
            .expect("fish is installed (make deps)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(complete("agentwire sh"), ["show"]);
    assert_eq!(complete("agentwire diff --fa"), ["--fail-on"]);
    // fish sorts the values
    assert_eq!(complete("agentwire analyze --ttl "), ["1h", "5m", "auto"]);
}

#[test]
fn zsh_loads_the_completion_function() {
    let dir = tempfile::tempdir().unwrap();
    script("zsh", dir.path(), "_agentwire");
    // compinit finds `_agentwire` on fpath and binds it to the agentwire command
    let o = Command::new("zsh")
        .arg("-f")
        .arg("-c")
        .arg(format!(
            "fpath=('{0}' $fpath); autoload -Uz compinit; compinit -u -d '{0}/zcompdump'; \
             print -r -- ${{_comps[agentwire]}}",
            dir.path().display()
        ))
        .output()
        .expect("zsh is installed (make deps)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap().trim(), "_agentwire");
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    let help = Command::new(bin()).arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    // The subcommands as `--help` lists them: indented names under "Commands:".
    let subs: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| *s != "help")
        .collect();
    assert!(subs.len() >= 12, "{subs:?}");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = Command::new(bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(o.status.success(), "{shell}");
        let script = String::from_utf8(o.stdout).unwrap();
        for s in &subs {
            assert!(script.contains(s), "{shell} script lacks {s}");
        }
    }
}

#[test]
fn man_pages_render_with_man() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let render = |page: &str| {
        let o = Command::new("man")
            .arg("-l")
            .arg(dir.path().join(page))
            .env("MANWIDTH", "200")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("man is installed (make deps)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // man emboldens with backspaces when not on a terminal; drop them
        let raw = String::from_utf8(o.stdout).unwrap();
        let mut text = String::new();
        for c in raw.chars() {
            if c == '\u{8}' {
                text.pop();
            } else if matches!(c, '\u{2010}' | '\u{2011}' | '\u{2212}') {
                text.push('-'); // groff's hyphen and minus glyphs
            } else {
                text.push(c);
            }
        }
        // justified lines: compare with single spaces
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let top = render("agentwire.1");
    assert!(top.contains("NAME"), "{top}");
    // the NAME line is the package description
    assert!(
        top.contains(&format!(
            "NAME agentwire - {}",
            env!("CARGO_PKG_DESCRIPTION")
        )),
        "{top}"
    );
    for sub in ["diff", "analyze", "pcap", "record", "completions"] {
        assert!(top.contains(sub), "agentwire.1 lists {sub}");
    }
    let diff = render("agentwire-diff.1");
    assert!(diff.contains("--fail-on"), "{diff}");
    assert!(diff.contains("Exit codes"), "{diff}");
    // Reported by a new user: "wrote 20 man pages" when 24 files were written (the
    // nested `report diff`, `cache prune`, ... pages were not counted), and those nested
    // commands' `--help` had no exit-code footer.
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(&format!("wrote {files} man pages")),
        "{said} ({files} files)"
    );
    for (page, args) in [
        ("agentwire-report-diff.1", ["report", "diff"]),
        ("agentwire-cache-prune.1", ["cache", "prune"]),
    ] {
        assert!(render(page).contains("Exit codes"), "{page}");
        let help = Command::new(bin())
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(help.contains("Exit codes:"), "{args:?} --help: {help}");
    }
    // `agentwire man` prints the top page, identical to the file written with --dir
    let o = Command::new(bin()).arg("man").output().unwrap();
    let file = std::fs::read(dir.path().join("agentwire.1")).unwrap();
    assert!(o.stdout == file, "`agentwire man` differs from agentwire.1");
}

#[test]
fn make_install_puts_binary_man_pages_and_completions_under_prefix() {
    let prefix = tempfile::tempdir().unwrap();
    let o = Command::new("make")
        .arg("-C")
        .arg(repo())
        .arg("install")
        .arg(format!("PREFIX={}", prefix.path().display()))
        .arg(format!("FROM={}", bin().display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = prefix.path();
    // the installed binary runs
    let v = Command::new(p.join("bin/agentwire"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(v.stdout).unwrap().trim(),
        format!("agentwire {}", env!("CARGO_PKG_VERSION"))
    );
    // man finds the subcommand pages through MANPATH, as for an installed program
    let m = Command::new("man")
        .arg("agentwire-analyze")
        .env("MANPATH", p.join("share/man"))
        .env("MANPAGER", "cat")
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    assert!(String::from_utf8_lossy(&m.stdout).contains("fail"));
    // bash-completion's lazy loader would source this file; it registers the function
    let c = Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p agentwire",
            p.join("share/bash-completion/completions/agentwire")
                .display()
        ))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&c.stdout).contains("-F _agentwire"));
    for f in [
        "share/zsh/site-functions/_agentwire",
        "share/fish/vendor_completions.d/agentwire.fish",
        "share/powershell/Modules/agentwire/agentwire.ps1",
    ] {
        assert!(std::fs::metadata(p.join(f)).unwrap().len() > 1000, "{f}");
    }
    // and uninstall removes it all again
    let u = Command::new("make")
        .arg("-C")
        .arg(repo())
        .arg("uninstall")
        .arg(format!("PREFIX={}", p.display()))
        .output()
        .unwrap();
    assert!(u.status.success());
    assert!(!p.join("bin/agentwire").exists());
    assert!(!p.join("share/man/man1/agentwire.1").exists());
}

/// The review's (a) row 10: `man --dir a.json/sub` (a directory under a file) said
/// "cannot write man pages into a.json/sub" and no reason, because an anyhow context lost
/// its cause in the binary's one-line error. The reason is part of the message now.
#[test]
fn man_pages_into_a_directory_under_a_file_say_why_they_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.json");
    std::fs::write(&file, "{}").unwrap();
    let target = file.join("sub");
    let o = Command::new(bin())
        .args(["man", "--dir"])
        .arg(&target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let want = format!("cannot write man pages into {}: ", target.display());
    assert!(err.contains(&want), "{err}");
    assert!(err.to_lowercase().contains("not a directory"), "{err}");
}
