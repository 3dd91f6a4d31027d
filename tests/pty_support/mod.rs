//! A pseudo-terminal harness shared by the console's PTY tests and benches:
//! runs the real binary in a PTY with a clean environment, feeds its output to
//! a vt100 screen, counts the bytes, and waits on screen conditions with a
//! bound.
#![allow(dead_code)]
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use taloscope::tui::palette::{BEGIN_FRAME, END_FRAME};

pub struct PtySession {
    parser: vt100::Parser,
    rx: mpsc::Receiver<Vec<u8>>,
    /// Every byte the program wrote to the terminal.
    pub bytes: usize,
    /// The bytes themselves, for checks on escape sequences.
    pub raw: Vec<u8>,
    /// How much of `raw` the parser has read.
    fed: usize,
    /// Whether a frame has begun and not yet ended.
    mid_frame: bool,
    /// The screen at the end of the last whole frame.
    last_frame: Option<String>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

/// The console's frame markers (DEC mode 2026 set and reset) are equally long.
const FRAME_MARK_LEN: usize = BEGIN_FRAME.len();

/// Where the first frame marker in `bytes` starts, and whether it begins a frame.
fn next_frame_mark(bytes: &[u8]) -> Option<(usize, bool)> {
    bytes
        .windows(FRAME_MARK_LEN)
        .enumerate()
        .find_map(|(at, w)| {
            if w == BEGIN_FRAME {
                Some((at, true))
            } else if w == END_FRAME {
                Some((at, false))
            } else {
                None
            }
        })
}

impl PtySession {
    /// Starts `args` with only `env` set (plus HOME/XDG dirs under `home`).
    pub fn start(
        rows: u16,
        cols: u16,
        home: &Path,
        args: &[&str],
        env: &[(&str, String)],
    ) -> PtySession {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_taloscope"));
        cmd.args(args);
        cmd.env_clear();
        cmd.cwd(home);
        cmd.env("HOME", home);
        cmd.env("XDG_CONFIG_HOME", home.join("config"));
        cmd.env("XDG_STATE_HOME", home.join("state"));
        cmd.env("TALOSCOPE_STATE_DIR", home.join("taloscope-state"));
        cmd.env("TERM", "xterm-256color");
        // Loopback only: the console learns the Talos releases from a registry a test names.
        cmd.env("TALOSCOPE_RELEASES_REGISTRY", "off");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn taloscope");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
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
        let parser = vt100::Parser::new(
            NonZeroU16::new(rows).expect("rows"),
            NonZeroU16::new(cols).expect("cols"),
            0,
        );
        PtySession {
            parser,
            rx,
            bytes: 0,
            raw: Vec::new(),
            fed: 0,
            mid_frame: false,
            last_frame: None,
            child,
            writer,
            _master: pair.master,
        }
    }

    /// Takes what output has arrived within `wait`; false if none.
    pub fn pump(&mut self, wait: Duration) -> bool {
        match self.rx.recv_timeout(wait) {
            Ok(bytes) => {
                self.take(&bytes);
                while let Ok(more) = self.rx.try_recv() {
                    self.take(&more);
                }
                true
            }
            Err(_) => false,
        }
    }

    /// Feeds the parser, noting the screen at the end of each whole frame: the console
    /// writes each frame as one synchronized update, and a read may end inside one.
    fn take(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        self.raw.extend_from_slice(bytes);
        // A marker may have arrived split over two reads: look back a marker's length.
        let mut from = self.fed.saturating_sub(FRAME_MARK_LEN - 1);
        while let Some((at, begins)) = next_frame_mark(&self.raw[from..]) {
            let end = from + at + FRAME_MARK_LEN;
            if end > self.fed {
                self.parser.process(&self.raw[self.fed..end]);
                self.fed = end;
            }
            if begins {
                self.mid_frame = true;
            } else {
                self.mid_frame = false;
                self.last_frame = Some(self.parser.screen().contents());
            }
            from = end;
        }
        let fed = self.fed;
        self.parser.process(&self.raw[fed..]);
        self.fed = self.raw.len();
    }

    /// The screen as the terminal shows it: the last whole frame while the next one is
    /// still arriving.
    pub fn text(&self) -> String {
        match (&self.last_frame, self.mid_frame) {
            (Some(frame), true) => frame.clone(),
            _ => self.parser.screen().contents(),
        }
    }

    /// Waits until `cond` holds for the screen text; panics after `bound`
    /// with the screen as it was.
    pub fn wait_for(
        &mut self,
        what: &str,
        bound: Duration,
        cond: impl Fn(&str) -> bool,
    ) -> Duration {
        let start = Instant::now();
        while !cond(&self.text()) {
            assert!(
                start.elapsed() < bound,
                "timed out waiting for {what}; screen:\n{}",
                self.text()
            );
            self.pump(Duration::from_millis(5));
        }
        start.elapsed()
    }

    /// Reads for `period` and returns how many bytes arrived in it.
    pub fn bytes_during(&mut self, period: Duration) -> usize {
        let before = self.bytes;
        let start = Instant::now();
        while start.elapsed() < period {
            self.pump(
                period
                    .saturating_sub(start.elapsed())
                    .min(Duration::from_millis(100)),
            );
        }
        self.bytes - before
    }

    /// Sends `keys` until `cond` holds on screen (each try waits up to 3 s), bounded by `bound`:
    /// for screens that open once something read in the background is known.
    pub fn retry_until(
        &mut self,
        what: &str,
        keys: &[u8],
        bound: Duration,
        cond: impl Fn(&str) -> bool,
    ) {
        let deadline = Instant::now() + bound;
        while !cond(&self.text()) {
            assert!(Instant::now() < deadline, "{what}:\n{}", self.text());
            self.send(keys);
            let until = Instant::now() + Duration::from_secs(3);
            while Instant::now() < until && !cond(&self.text()) {
                self.pump(Duration::from_millis(50));
            }
        }
    }

    pub fn send(&mut self, keys: &[u8]) {
        self.writer.write_all(keys).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// The child's resident set size in KiB (VmRSS), from /proc.
    pub fn rss_kib(&self) -> Option<u64> {
        let pid = self.child.process_id()?;
        rss_of(pid, "VmRSS:")
    }

    /// One of the child's /proc status sizes in KiB, by its key (`RssAnon:`, `RssFile:`...).
    pub fn status_kib(&self, key: &str) -> Option<u64> {
        let pid = self.child.process_id()?;
        rss_of(pid, key)
    }

    /// The child's peak resident set size in KiB (VmHWM).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let pid = self.child.process_id()?;
        rss_of(pid, "VmHWM:")
    }

    /// Waits (bounded) for the program to exit by itself, then drains its
    /// output; returns the exit status and every byte it wrote.
    pub fn finish(mut self, bound: Duration) -> (portable_pty::ExitStatus, Vec<u8>) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for taloscope") {
                break status;
            }
            assert!(
                start.elapsed() < bound,
                "taloscope did not exit; screen:\n{}",
                self.text()
            );
            self.pump(Duration::from_millis(20));
        };
        // The child is gone, so its side of the pty is closed: drain to EOF.
        while self.pump(Duration::from_millis(200)) {}
        (status, self.raw)
    }

    /// Sends `q`, answers `y` if the console asks first (work it started may still be
    /// reporting its end), and waits (bounded) for it to exit, as [`PtySession::finish`].
    pub fn quit_answering(mut self, bound: Duration) -> (portable_pty::ExitStatus, Vec<u8>) {
        self.send(b"q");
        let start = Instant::now();
        while start.elapsed() < bound {
            if self.child.try_wait().ok().flatten().is_some() {
                break;
            }
            if self.text().contains("quit? y/N") {
                self.send(b"y");
                break;
            }
            self.pump(Duration::from_millis(20));
        }
        self.finish(bound)
    }

    /// Sends `q` and waits (bounded) for the exit code.
    pub fn quit(mut self, bound: Duration) -> Option<u32> {
        self.send(b"q");
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.exit_code());
            }
            if start.elapsed() > bound {
                let _ = self.child.kill();
                return None;
            }
            self.pump(Duration::from_millis(20));
        }
    }
}

fn rss_of(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// A simulated fleet served from this process on a tokio runtime of its own (the console
/// under test runs in the PTY as a child process); shut down on drop.
pub struct BackgroundSim {
    runtime: tokio::runtime::Runtime,
    fleet: Option<taloscope_sim::SimFleet>,
    pub dir: tempfile::TempDir,
}

impl BackgroundSim {
    /// Starts scenario `NAME` and waits (bounded) until every listener is up.
    pub fn start(scenario: &str, bound: Duration) -> BackgroundSim {
        BackgroundSim::start_scaled(scenario, 1.0, bound)
    }

    /// [`BackgroundSim::start`] with `time_scale` simulated seconds per real one.
    pub fn start_scaled(scenario: &str, time_scale: f64, bound: Duration) -> BackgroundSim {
        taloscope::install_crypto_provider();
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = taloscope_sim::Scenario::load(scenario).expect("scenario loads");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("sim runtime");
        let options = taloscope_sim::SimOptions {
            state_dir: dir.path().to_path_buf(),
            time_scale,
        };
        let fleet = runtime
            .block_on(async {
                tokio::time::timeout(bound, taloscope_sim::SimFleet::start(scenario, options)).await
            })
            .expect("sim starts in time")
            .expect("sim starts");
        BackgroundSim {
            runtime,
            fleet: Some(fleet),
            dir,
        }
    }

    /// The running sim: its state, clock and CAPI objects, for checks beside the console's.
    pub fn fleet(&self) -> &taloscope_sim::SimFleet {
        self.fleet.as_ref().expect("the sim runs until drop")
    }

    pub fn talosconfig(&self) -> String {
        self.dir.path().join("talosconfig").display().to_string()
    }

    pub fn kubeconfig(&self) -> String {
        self.dir.path().join("kubeconfig").display().to_string()
    }

    /// The environment of a console on this sim: NO_COLOR=1, LANG=C and the sim's configs.
    pub fn console_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("NO_COLOR", "1".to_string()),
            ("LANG", "C".to_string()),
            ("TALOSCONFIG", self.talosconfig()),
            ("KUBECONFIG", self.kubeconfig()),
        ]
    }

    /// The console on this sim in a `rows` x `cols` terminal (its files under `home`),
    /// showing `cluster`'s nodes pane; each wait bounded by `bound`.
    pub fn console_on_cluster(
        &self,
        home: &Path,
        (rows, cols): (u16, u16),
        cluster: &str,
        bound: Duration,
    ) -> PtySession {
        let mut s = PtySession::start(rows, cols, home, &[], &self.console_env());
        s.wait_for("the fleet", bound, |t| {
            t.contains(cluster) && t.contains("Enter open")
        });
        s.send(format!(":ctx {cluster}\r").as_bytes());
        s.wait_for("the nodes pane", bound, |t| t.contains("+ Nodes ("));
        s
    }

    /// The console's command line as `taloscope-demo` builds it: the sim's configs
    /// (its OpenNebula providers too) and a state dir beside them.
    pub fn demo_console_args(&self) -> Vec<String> {
        let dir = self.dir.path();
        vec![
            "--talosconfig".into(),
            self.talosconfig(),
            "--kubeconfig".into(),
            self.kubeconfig(),
            "--config".into(),
            dir.join("taloscope.yaml").display().to_string(),
            "--state-dir".into(),
            dir.join("state").display().to_string(),
        ]
    }
}

impl Drop for BackgroundSim {
    fn drop(&mut self) {
        if let Some(fleet) = self.fleet.take() {
            self.runtime.block_on(fleet.shutdown());
        }
    }
}

/// The console on `sim` at 80x24 (its files under `home`) showing all five nodes of
/// `cluster`'s nodes pane.
pub fn console_on_five_nodes(
    sim: &BackgroundSim,
    home: &Path,
    cluster: &str,
    bound: Duration,
) -> PtySession {
    let mut s = sim.console_on_cluster(home, (24, 80), cluster, bound);
    s.wait_for("the nodes", bound, |t| {
        t.contains("+ Nodes (5)") && t.contains("w-2")
    });
    s
}

/// The environment of a console on a sim's files: NO_COLOR=1, LANG=C and the two configs.
pub fn env_on(talosconfig: &Path, kubeconfig: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("NO_COLOR", "1".to_string()),
        ("LANG", "C".to_string()),
        ("TALOSCONFIG", talosconfig.display().to_string()),
        ("KUBECONFIG", kubeconfig.display().to_string()),
    ]
}

/// The audit log of a console started under `home`.
pub fn audit_log(home: &Path) -> String {
    std::fs::read_to_string(home.join("taloscope-state/audit.log")).unwrap_or_default()
}
