//! The terminal side of the binary's output: colour on stdout, and the progress bars and
//! spinners on stderr. Both follow one rule: only on a terminal, and never when
//! `NO_COLOR` is set to a non-empty value (no-color.org), so a log file or a pipe never
//! sees carriage returns or escape sequences. Every progress bar is made here.

/// True when `NO_COLOR` is set to a non-empty value (no-color.org).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Colour on stdout: only when stdout is a terminal and `NO_COLOR` is unset or empty.
pub(crate) fn stdout_color() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout()) && !no_color()
}

/// Progress bars and spinners on stderr: only when stderr is a terminal and `NO_COLOR` is
/// unset or empty. Otherwise stderr gets plain lines only (summaries, warnings), so a log
/// file or a pipe never sees carriage returns or escape sequences.
pub(crate) fn stderr_live() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr()) && !no_color()
}

/// `pb`, drawn on stderr only when `shown` and [`stderr_live`] (else hidden).
fn on_stderr(pb: indicatif::ProgressBar, shown: bool) -> indicatif::ProgressBar {
    if !shown || !stderr_live() {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb
}

/// A spinner on stderr (hidden unless [`stderr_live`]).
pub(crate) fn progress_spinner() -> indicatif::ProgressBar {
    let pb = on_stderr(indicatif::ProgressBar::new_spinner(), true);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// A byte-count progress bar on stderr for `total` bytes of input, shown only for long
/// work (`total` ≥ 64 MiB) and when [`stderr_live`].
pub(crate) fn progress_bytes(total: u64) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} {msg}",
        )
        .expect("static template"),
    );
    on_stderr(pb, total >= 64 << 20)
}

/// A progress bar on stderr for reading many inputs whose total size is learnt on the way
/// (`import`): bytes done of the total so far, and a message (files done); hidden unless
/// [`stderr_live`].
pub(crate) fn progress_files() -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(0);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {pos_files} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .with_key(
                "pos_files",
                |_: &indicatif::ProgressState, _: &mut dyn std::fmt::Write| {},
            ),
    );
    on_stderr(pb, true)
}
