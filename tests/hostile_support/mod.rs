//! Shared by the hostile-input tests: the binary run with a bound, talosconfigs
//! with the fixture's Ed25519 credentials and chosen endpoints, and loopback
//! listeners that accept and never answer or answer with hostile bytes.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run of the binary gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs taloscope with `args` and `env` (HOME and the state dir inside
/// `home`, no inherited KUBECONFIG/TALOSCONFIG), killed if it outlives `bound`.
pub fn taloscope(home: &Path, args: &[&str], env: &[(&str, &str)], bound: Duration) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taloscope"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TALOSCOPE_STATE_DIR", home.join("state"))
        .env("TALOSCONFIG", "")
        .env("KUBECONFIG", "")
        .env("NO_COLOR", "1")
        // No release registry: tests never reach ghcr.io.
        .env("TALOSCOPE_RELEASES_REGISTRY", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start taloscope");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            panic!("taloscope {args:?} outlived its bound of {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&reader.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
        took,
    }
}

/// The `ca`, `crt` and `key` lines of the fixture's first context.
pub fn fixture_credentials() -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/discovery/c.yaml"),
    )
    .unwrap();
    let pick = |key: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap()
            .trim()
            .to_string()
    };
    format!(
        "    {}\n    {}\n    {}\n",
        pick("ca:"),
        pick("crt:"),
        pick("key:")
    )
}

/// A talosconfig with one context `name` on `endpoints`, node 127.0.0.1.
pub fn talosconfig(name: &str, endpoints: &[String]) -> String {
    let list: Vec<String> = endpoints.iter().map(|e| format!("{e:?}")).collect();
    format!(
        "context: {name:?}\ncontexts:\n  {name:?}:\n    endpoints: [{}]\n    nodes: [\"127.0.0.1\"]\n{}",
        list.join(", "),
        fixture_credentials()
    )
}

/// Listeners that accept connections and never say a byte; kept open while
/// the value lives.
pub struct Silent {
    pub addresses: Vec<String>,
    _listeners: Vec<TcpListener>,
}

pub fn silent_listeners(n: usize) -> Silent {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    Silent {
        addresses: listeners
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect(),
        _listeners: listeners,
    }
}

/// A listener that answers every connection with `reply` after reading what
/// it is sent (up to a blank line), then closes. Returns its address.
pub fn answering(reply: impl Fn(&mut dyn Write) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.set_read_timeout(Some(Duration::from_millis(300)));
            let _ = conn.read(&mut buf);
            reply(&mut conn);
        }
    });
    addr
}
