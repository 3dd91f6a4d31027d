//! `taloscope demo` runs the `taloscope-demo` beside its own executable: with none there it
//! exits 2 saying how to get one; with one there it runs it with the display flags
//! and passes its exit code back. The binary is hard-linked into a directory of its own.
use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory holding only (a hard link to) the console binary.
fn lone_console() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("dir");
    let exe = dir.path().join("taloscope");
    std::fs::hard_link(env!("CARGO_BIN_EXE_taloscope"), &exe)
        .or_else(|_| std::fs::copy(env!("CARGO_BIN_EXE_taloscope"), &exe).map(|_| ()))
        .expect("console binary in place");
    (dir, exe)
}

fn demo(exe: &Path, flags: &[&str]) -> std::process::Output {
    Command::new(exe)
        .arg("demo")
        .args(flags)
        .env_clear()
        .output()
        .expect("runs")
}

#[test]
fn without_a_sim_beside_it_demo_says_how_to_get_one() {
    let (_dir, exe) = lone_console();
    let out = demo(&exe, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cargo run -p taloscope-demo")
            && stderr.contains("cargo install --path crates/taloscope-demo"),
        "{stderr}"
    );
}

#[test]
fn demo_runs_the_sim_beside_it_and_passes_its_exit_code_back() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, exe) = lone_console();
    let args_file = dir.path().join("args");
    let sim = dir.path().join("taloscope-demo");
    std::fs::write(
        &sim,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexit 7\n",
            args_file.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&sim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = demo(&exe, &["--ascii", "--theme", "mono", "--readonly"]);
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let args = std::fs::read_to_string(&args_file).expect("the sim ran");
    assert_eq!(args.trim(), "--readonly --theme mono --color auto --ascii");
    // The demo brings its own files: it takes no --kubeconfig or --talosconfig.
    let out = demo(&exe, &["--kubeconfig", "/k"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
