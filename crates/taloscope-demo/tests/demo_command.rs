//! `taloscope-demo` opens the console and needs a terminal: without one it exits 2 and says
//! so, before it starts anything.
use std::process::{Command, Stdio};

#[test]
fn demo_without_a_terminal_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_taloscope-demo"))
        .stdout(Stdio::piped())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a terminal"), "{stderr}");
}
