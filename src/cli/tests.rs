//! Unit tests of the command line: each subcommand lists only the flags it
//! reads, files and look count before or after the subcommand, and every
//! mutating command takes the gate's flags.
use super::*;

fn help(args: &[&str]) -> String {
    let err = Cli::try_parse_args(args).expect_err("--help ends parsing");
    assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp);
    err.to_string()
}

#[test]
fn subcommands_list_only_the_flags_they_read() {
    for sub in ["contexts", "status", "upgrade", "upgrade-k8s", "provision"] {
        let text = help(&["taloscope", sub, "--help"]);
        for console_only in ["--theme", "--refresh", "--ascii", "--demo-fleet"] {
            assert!(
                !text.contains(console_only),
                "{sub} lists {console_only}:\n{text}"
            );
        }
        assert!(
            text.contains("--kubeconfig") && text.contains("--talosconfig"),
            "{text}"
        );
    }
    let info = help(&["taloscope", "info", "--help"]);
    assert!(
        info.contains("--theme") && !info.contains("--refresh"),
        "{info}"
    );
    let demo = help(&["taloscope", "demo", "--help"]);
    assert!(
        demo.contains("--theme") && demo.contains("--refresh"),
        "{demo}"
    );
    assert!(
        !demo.contains("--kubeconfig") && !demo.contains("--talosconfig"),
        "{demo}"
    );
    let console = help(&["taloscope", "--help"]);
    for flag in ["--theme", "--refresh", "--ascii", "--kubeconfig"] {
        assert!(
            console.contains(flag),
            "the console lists {flag}:\n{console}"
        );
    }
}

#[test]
fn files_and_look_count_before_or_after_the_subcommand() {
    let before = Cli::try_parse_args(["taloscope", "--kubeconfig", "/k", "status"]).unwrap();
    let after = Cli::try_parse_args(["taloscope", "status", "--kubeconfig", "/k"]).unwrap();
    for cli in [before, after] {
        assert_eq!(cli.global.sources.kubeconfig, Some(PathBuf::from("/k")));
    }
    let demo = Cli::try_parse_args(["taloscope", "demo", "--theme", "mono", "--refresh", "2"])
        .unwrap()
        .global;
    assert_eq!(
        (demo.look.theme.as_deref(), demo.console.refresh),
        (Some("mono"), Some(2))
    );
    let console = Cli::try_parse_args(["taloscope", "--ascii", "--context", "lab"]).unwrap();
    let global = console.global;
    assert!(
        global.look.ascii && global.context.as_deref() == Some("lab") && !global.console.demo_fleet
    );
    // Global flags still go anywhere.
    let late = Cli::try_parse_args(["taloscope", "status", "--readonly"]).unwrap();
    assert!(late.global.readonly);
    assert!(Cli::try_parse_args(["taloscope", "status", "--theme", "x"]).is_err());
}

#[test]
fn every_mutating_command_takes_the_gates_flags() {
    let mutating: [&[&str]; 15] = [
        &["upgrade"],
        &["upgrade-k8s"],
        &["provision"],
        &["node", "reboot"],
        &["node", "shutdown"],
        &["node", "cordon"],
        &["node", "uncordon"],
        &["node", "drain"],
        &["node", "forget"],
        &["service", "restart"],
        &["etcd"],
        &["create"],
        &["delete"],
        &["capi", "doctor"],
        &["scale"],
    ];
    for command in mutating {
        let text = help(&[&["taloscope"], command, &["--help"]].concat());
        for flag in ["--plan", "--yes", "--confirm", "--ack", "--output"] {
            assert!(text.contains(flag), "{command:?} lacks {flag}:\n{text}");
        }
    }
    // The acknowledgement a single control plane's reboot plan asks for is taken.
    let reboot = Cli::try_parse_args([
        "taloscope",
        "node",
        "reboot",
        "--node",
        "cp-1",
        "--plan",
        "--ack",
        "the Kubernetes API will be down",
    ]);
    assert!(reboot.is_ok(), "{reboot:?}");
}

#[test]
fn every_role_flag_reads_the_same_words() {
    let role = |args: &[&str]| Cli::try_parse_args(args).map(|cli| cli.command);
    let provision = ["taloscope", "provision", "--plan", "--role"];
    let Ok(Some(Command::Provision(p))) = role(&[&provision[..], &["control-plane"]].concat())
    else {
        panic!("provision --role control-plane")
    };
    assert_eq!(p.role, Some(crate::config::MachineRole::Controlplane));
    let scale = ["taloscope", "scale", "--replicas", "2", "--role"];
    let Ok(Some(Command::Scale(s))) = role(&[&scale[..], &["worker"]].concat()) else {
        panic!("scale --role worker")
    };
    assert_eq!(s.role, crate::capi::MachineRole::Worker);
    let patch = [
        "taloscope",
        "config",
        "patch",
        "--patch",
        "p.yaml",
        "--role",
    ];
    let Ok(Some(Command::Config(ConfigArgs {
        verb: ConfigVerb::Patch(c),
    }))) = role(&[&patch[..], &["controlplane"]].concat())
    else {
        panic!("config patch --role controlplane")
    };
    assert_eq!(c.role, Some(crate::fleet::NodeRole::Controlplane));
    let wrong = role(&[&scale[..], &["master"]].concat()).expect_err("not a role");
    assert!(
        wrong
            .to_string()
            .contains("\"master\" is not a role; use controlplane or worker"),
        "{wrong}"
    );
}
