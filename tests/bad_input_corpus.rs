//! A table of bad inputs — config files, command-line arguments, server
//! replies — each run through the real binary: the exit code is asserted,
//! the message must name the file, context or node, and nothing may print a
//! raw escape sequence.
mod bad_input_cases;
mod hostile_support;

use std::time::Duration;

use bad_input_cases::{Case, Slot, case, config_cases};
use hostile_support::{answering, silent_listeners, talosconfig, taloscope};

const BOUND: Duration = Duration::from_secs(40);

fn run_case(c: &Case, extra: &[String]) {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("input.yaml");
    let mut args: Vec<String> = c.command.split(' ').map(String::from).collect();
    match c.slot {
        Slot::Args => args.extend(
            c.text
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(String::from),
        ),
        slot => {
            std::fs::write(&file, &c.text).unwrap();
            let flag = match slot {
                Slot::Talos => "--talosconfig",
                Slot::Kube => "--kubeconfig",
                _ => "--config",
            };
            args.extend([flag.to_string(), file.display().to_string()]);
        }
    }
    args.extend(extra.iter().cloned());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = taloscope(home.path(), &argv, &[], BOUND);
    let all = run.all();
    assert_eq!(run.code, c.code, "{}: exit code; output:\n{all}", c.name);
    for want in c.says {
        let want = want.replace("{file}", &file.display().to_string());
        assert!(
            all.contains(&want),
            "{}: {want:?} missing from:\n{all}",
            c.name
        );
    }
    assert!(
        !all.contains('\u{1b}'),
        "{}: raw ESC printed:\n{all:?}",
        c.name
    );
    assert!(!all.contains("panicked"), "{}: {all}", c.name);
}

#[test]
fn bad_configs_and_arguments_fail_clearly() {
    let cases = config_cases();
    assert!(cases.len() >= 55, "{}", cases.len());
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| std::panic::catch_unwind(|| run_case(c, &[])).is_err())
        .map(|c| c.name)
        .collect();
    assert!(failed.is_empty(), "failed cases: {failed:?}");
}

/// Server replies: a talosconfig whose one endpoint answers with `reply`.
#[test]
fn hostile_server_replies_fail_clearly() {
    type Reply = fn(&mut dyn std::io::Write);
    let replies: [(&str, Reply); 6] = [
        ("closes at once", |_w| {}),
        ("HTTP text", |w| {
            let _ = w.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }),
        ("random bytes", |w| {
            let _ = w.write_all(&[0x16, 0x03, 0x01, 0xff, 0xff, 0, 0, 0, 0]);
        }),
        ("a megabyte of zeros", |w| {
            let _ = w.write_all(&vec![0u8; 1 << 20]);
        }),
        ("an escape sequence", |w| {
            let _ = w.write_all(b"\x1b]0;owned\x07\x1b[2J");
        }),
        ("TLS alert", |w| {
            let _ = w.write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);
        }),
    ];
    for (name, reply) in replies {
        let addr = answering(reply);
        let c = case(
            name,
            Slot::Talos,
            talosconfig("hostile", std::slice::from_ref(&addr)),
            "status",
            1,
            &["hostile", "every node failed"],
        );
        run_case(&c, &[]);
        let json = case(
            name,
            Slot::Talos,
            talosconfig("hostile", &[addr]),
            "status",
            1,
            &["\"error\": \"every node failed"],
        );
        run_case(&json, &["--output".into(), "json".into()]);
    }
    let silent = silent_listeners(1);
    let c = case(
        "silent endpoint under --timeout 1",
        Slot::Talos,
        talosconfig("quiet", &silent.addresses),
        "status",
        1,
        &["quiet", "--timeout of 1s"],
    );
    run_case(&c, &["--timeout".into(), "1".into()]);
    let mixed = vec!["bad endpoint".to_string(), silent.addresses[0].clone()];
    let c = case(
        "one bad endpoint among good ones",
        Slot::Talos,
        talosconfig("mixed", &mixed),
        "status",
        1,
        &["mixed", "not a valid host:port"],
    );
    run_case(&c, &[]);
}
