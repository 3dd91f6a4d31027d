//! End-to-end: the real binary in an 80x24 pseudo-terminal on fixture configs
//! (loopback addresses only), NO_COLOR=1 LANG=C. It must show the cluster
//! list with ASCII borders, open help on `?`, close it on Esc, quit on `q`
//! with exit 0, and leave the terminal restored.
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 24;
const COLS: u16 = 80;
/// Generous: a debug binary on a busy 2-core machine.
const BOUND: Duration = Duration::from_secs(30);

struct Screen {
    parser: vt100::Parser,
    raw: Vec<u8>,
    rx: mpsc::Receiver<Vec<u8>>,
}

impl Screen {
    fn pump(&mut self, wait: Duration) -> bool {
        match self.rx.recv_timeout(wait) {
            Ok(bytes) => {
                self.parser.process(&bytes);
                self.raw.extend_from_slice(&bytes);
                true
            }
            Err(_) => false,
        }
    }

    fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Reads output until `cond` holds for the screen text, or fails after
    /// the bound with the screen as it was.
    fn wait_for(&mut self, what: &str, cond: impl Fn(&str) -> bool) {
        let start = Instant::now();
        while !cond(&self.text()) {
            assert!(
                start.elapsed() < BOUND,
                "timed out waiting for {what}; screen:\n{}",
                self.text()
            );
            self.pump(Duration::from_millis(50));
        }
    }
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(name)
        .display()
        .to_string()
}

fn last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// The binary running in a pty on the discovery fixtures.
struct Session {
    home: tempfile::TempDir,
    screen: Screen,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    reader_thread: std::thread::JoinHandle<()>,
}

impl Session {
    fn start() -> Session {
        let home = tempfile::tempdir().expect("temp home");
        let h = home.path();
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_taloscope"));
        cmd.env_clear();
        cmd.cwd(h);
        cmd.env("HOME", h);
        cmd.env("XDG_CONFIG_HOME", h.join("config"));
        cmd.env("XDG_STATE_HOME", h.join("state"));
        cmd.env("XDG_DATA_HOME", h.join("data"));
        cmd.env("XDG_CACHE_HOME", h.join("cache"));
        cmd.env("TALOSCOPE_STATE_DIR", h.join("taloscope-state"));
        cmd.env("TERM", "xterm-256color");
        cmd.env("NO_COLOR", "1");
        cmd.env("LANG", "C");
        cmd.env(
            "KUBECONFIG",
            format!("{}:{}", fixture("a.yaml"), fixture("b.yaml")),
        );
        cmd.env(
            "TALOSCONFIG",
            format!("{}:{}", fixture("c.yaml"), fixture("broken.yaml")),
        );
        let child = pair.slave.spawn_command(cmd).expect("spawn taloscope");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let (tx, rx) = mpsc::channel();
        let reader_thread = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let size = |n: u16| NonZeroU16::new(n).expect("non-zero");
        let screen = Screen {
            parser: vt100::Parser::new(size(ROWS), size(COLS), 0),
            raw: Vec::new(),
            rx,
        };
        let mut session = Session {
            home,
            screen,
            child,
            writer,
            master: pair.master,
            reader_thread,
        };
        session.screen.wait_for("the cluster list", |t| {
            t.contains("Clusters (")
                && t.contains("alpha")
                && t.contains("charlie")
                && t.contains("Enter use")
        });
        session
    }

    fn press(&mut self, keys: &[u8]) {
        self.writer.write_all(keys).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// Waits (bounded) for the process to exit, then drains the output.
    fn finish(mut self) -> (portable_pty::ExitStatus, Vec<u8>, tempfile::TempDir) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(start.elapsed() < BOUND, "taloscope did not exit");
            self.screen.pump(Duration::from_millis(50));
        };
        drop(self.writer);
        drop(self.master);
        while self.screen.pump(Duration::from_millis(200)) {}
        let _ = self.reader_thread.join();
        (status, self.screen.raw, self.home)
    }
}

/// The output ends with the terminal restored: alternate screen left, cursor
/// shown, bracketed paste off, and nothing drawn afterwards.
fn assert_restored(raw: &[u8]) {
    let entered = last(raw, b"\x1b[?1049h").expect("entered the alternate screen");
    let left = last(raw, b"\x1b[?1049l").expect("left the alternate screen");
    assert!(left > entered, "alternate screen not left at the end");
    let shown = last(raw, b"\x1b[?25h").expect("cursor shown");
    assert!(
        shown > left,
        "cursor must be shown after leaving the alternate screen"
    );
    if let Some(hidden) = last(raw, b"\x1b[?25l") {
        assert!(shown > hidden, "cursor left hidden");
    }
    let paste_off = last(raw, b"\x1b[?2004l").expect("bracketed paste switched off");
    assert!(paste_off > entered);
    let tail = String::from_utf8_lossy(&raw[left..]);
    assert!(
        !tail.contains("Clusters"),
        "drawing after restore: {tail:?}"
    );
}

#[test]
fn console_lists_clusters_shows_help_and_quits_clean() {
    let mut s = Session::start();
    let list = s.screen.text();
    assert!(
        list.contains("+ Clusters ("),
        "ASCII borders expected:\n{list}"
    );
    assert!(
        list.contains("discovery error"),
        "broken.yaml must show:\n{list}"
    );
    assert!(list.is_ascii(), "LANG=C must give ASCII only:\n{list}");

    s.press(b"?");
    s.screen.wait_for("help", |t| {
        t.contains("+ Help ") && t.contains("Cluster list")
    });
    s.press(b"\x1b");
    s.screen.wait_for("help to close", |t| {
        !t.contains("+ Help ") && t.contains("Clusters (")
    });
    s.press(b"q");
    let (status, raw, home) = s.finish();
    assert!(status.success(), "exit status {status:?}");
    assert_restored(&raw);
    // Logs went to the state dir, not the terminal.
    let logs = home.path().join("taloscope-state/logs");
    assert!(
        std::fs::read_dir(&logs)
            .map(|d| d.count() > 0)
            .unwrap_or(false),
        "no log file under {}",
        logs.display()
    );
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let s = Session::start();
        let pid = s.child.process_id().expect("child pid");
        let pid = libc::pid_t::try_from(pid).expect("pid fits");
        // SAFETY: kill(2) on the child we spawned; no memory is involved.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill failed");
        let (status, raw, _home) = s.finish();
        assert_eq!(status.exit_code(), code, "signal {signal}");
        assert_restored(&raw);
    }
}
