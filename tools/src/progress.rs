//! Progress output on stderr: a bar redrawn in place (`\r`) on a terminal; elsewhere (CI logs,
//! files, pipes) no `\r` at all, only a plain line when the caller's key changes (a fault done,
//! a phase begun) or every [`LINE_EVERY`].

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Off a terminal: the longest time between two plain lines while the key stays the same.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing.
    Off,
    /// A `\r`-framed bar (a terminal).
    Bar,
    /// Occasional plain lines (anything else).
    Lines,
}

#[derive(Debug, Default)]
struct State {
    /// A bar frame is on the screen (its line not yet ended).
    drawn: bool,
    /// When the last plain line was written, and its key.
    last: Option<(Instant, String)>,
}

/// A progress display; shareable between threads.
#[derive(Debug)]
pub struct Progress {
    mode: Mode,
    /// Characters of the bar (0: no bar).
    width: u64,
    /// Starts every plain line (`demo`, `soak`).
    label: &'static str,
    state: Mutex<State>,
}

impl Progress {
    /// On stderr: a bar if stderr is a terminal, plain lines otherwise, nothing unless `on`.
    pub fn stderr(on: bool, width: u64, label: &'static str) -> Progress {
        let mode = match (on, std::io::stderr().is_terminal()) {
            (false, _) => Mode::Off,
            (true, true) => Mode::Bar,
            (true, false) => Mode::Lines,
        };
        Progress::with_mode(mode, width, label)
    }

    /// A display in `mode`.
    pub fn with_mode(mode: Mode, width: u64, label: &'static str) -> Progress {
        Progress {
            mode,
            width,
            label,
            state: Mutex::new(State::default()),
        }
    }

    /// Show `done` of `total` (no bar if `total` is 0) and `text`. Off a terminal a line is
    /// written only when `key` differs from the last line's or [`LINE_EVERY`] has passed.
    pub fn update(&self, key: &str, done: u64, total: u64, text: impl FnOnce() -> String) {
        if let Some(out) = self.render(Instant::now(), key, done, total, text) {
            let mut e = std::io::stderr().lock();
            let _ = e.write_all(out.as_bytes());
            let _ = e.flush();
        }
    }

    /// End the bar's line (a terminal); the next update starts afresh (a new phase).
    pub fn finish(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if std::mem::take(&mut s.drawn) {
            eprintln!();
        }
        s.last = None;
    }

    /// What [`Progress::update`] writes at `now`, if anything.
    fn render(
        &self,
        now: Instant,
        key: &str,
        done: u64,
        total: u64,
        text: impl FnOnce() -> String,
    ) -> Option<String> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match self.mode {
            Mode::Off => None,
            Mode::Bar => {
                s.drawn = true;
                let bar = if total == 0 || self.width == 0 {
                    String::new()
                } else {
                    let filled = (done.min(total) * self.width / total) as usize;
                    format!(
                        "[{}{}] ",
                        "#".repeat(filled),
                        ".".repeat(self.width as usize - filled)
                    )
                };
                Some(format!("\r{bar}{}", text()))
            }
            Mode::Lines => {
                let due = match &s.last {
                    None => true,
                    Some((at, k)) => k != key || now.duration_since(*at) >= LINE_EVERY,
                };
                if !due {
                    return None;
                }
                s.last = Some((now, key.to_string()));
                let text = text();
                Some(format!("{}: {}\n", self.label, text.trim()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_a_terminal_there_is_no_carriage_return_and_a_line_only_per_key_or_interval() {
        let p = Progress::with_mode(Mode::Lines, 30, "soak");
        let t0 = Instant::now();
        let mut out = String::new();
        // 1,000 updates over 25 s: the key changes three times.
        for k in 0..1000u64 {
            let now = t0 + Duration::from_millis(25 * k);
            let key = format!("{}", k / 300);
            if let Some(s) = p.render(now, &key, k, 1000, || format!("{k:>7}/1000 load   ")) {
                out += &s;
            }
        }
        assert!(!out.contains('\r'), "{out:?}");
        let lines: Vec<&str> = out.lines().collect();
        // Keys 0..=3 (4 lines) and one more every 10 s within a key (key 0 and key 1 last
        // 7.5 s, key 2 as well, key 3 2.5 s): 4 lines.
        assert_eq!(lines.len(), 4, "{out}");
        assert!(
            lines
                .iter()
                .all(|l| l.starts_with("soak: ") && l.ends_with("load"))
        );
        // The same key for longer than LINE_EVERY: one line each interval.
        let p = Progress::with_mode(Mode::Lines, 0, "memory");
        let n = (0..100u64)
            .filter_map(|k| p.render(t0 + Duration::from_secs(k), "m", 0, 0, String::new))
            .count();
        assert_eq!(n, 10);
    }

    #[test]
    fn on_a_terminal_each_frame_is_redrawn_in_place_and_off_writes_nothing() {
        let p = Progress::with_mode(Mode::Bar, 4, "demo");
        let f = p.render(Instant::now(), "k", 2, 4, || "2/4 note".into());
        assert_eq!(f.as_deref(), Some("\r[##..] 2/4 note"));
        let p = Progress::with_mode(Mode::Off, 4, "demo");
        assert_eq!(p.render(Instant::now(), "k", 2, 4, || "x".into()), None);
    }
}
