//! Snapshots of the machine configuration screen (`:config w-1`) at 80x24 and 200x50 in
//! default, NO_COLOR and ASCII modes: the sections folded as it opens, `machine` (its token
//! redacted) and `machine.kubelet` open, the cursor on the latter, the screen before the read arrived, and a
//! reader's refusal.
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::machine_config::{NodeConfig, documents};
use taloscope::views::config::{ConfigNews, ConfigScreen, NAME};
use view_support::{all_renders, press, scenarios};

/// A worker's configuration as Talos 1.10 writes one: the v1alpha1 document (its token and
/// CA key are secrets) and a registry mirror document.
const TEXT: &str = "version: v1alpha1\ndebug: false\npersist: true\nmachine:\n  type: worker\n  token: q3yzpe.8whd3wgzq6qpnbbh\n  ca:\n    crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    key: \"\"\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.33.1\n    extraArgs:\n      rotate-server-certificates: \"true\"\n    defaultRuntimeSeccompProfileEnabled: true\n  network:\n    hostname: w-1\n  install:\n    disk: /dev/sda\n    image: ghcr.io/siderolabs/installer:v1.10.4\ncluster:\n  clusterName: healthy\n  controlPlane:\n    endpoint: https://127.0.0.1:6443\n  network:\n    dnsDomain: cluster.local\n    podSubnets:\n      - 10.244.0.0/16\n    serviceSubnets:\n      - 10.96.0.0/12\n  token: 4bp1x5.ns6ukx3ygl8fobv6\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n  - url: https://127.0.0.1:5443\n";

fn w1_config() -> NodeConfig {
    let (documents, redacted) = documents("w-1", TEXT, false).expect("parses");
    NodeConfig {
        node: "w-1".into(),
        address: "10.5.0.4".into(),
        version: "3".into(),
        revealed: false,
        redacted,
        documents,
    }
}

/// `:config w-1` on a cluster like the sim's, with `read` arrived.
fn opened(read: Option<Result<NodeConfig, String>>) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::OpenCommandLine);
    for c in "config w-1".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Module(NAME));
    if let Some(read) = read {
        let screen = s.screens.find::<ConfigScreen>().expect("the screen");
        let reading = screen.node.request.as_ref().expect("a request").reading;
        let news = ConfigNews { reading, read };
        update(
            &mut s,
            Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
        );
    }
    s
}

#[test]
fn config_of_a_worker_folded_then_its_kubelet_open() {
    let mut s = opened(Some(Ok(w1_config())));
    insta::assert_snapshot!("config_folded", all_renders(&s));
    let j = KeyCode::Char('j');
    for key in [j, KeyCode::Enter, j, j, j, j, KeyCode::Enter] {
        press(&mut s, key);
    }
    let text = all_renders(&s);
    assert!(text.contains("token: <redacted sha256:"), "{text}");
    assert!(!text.contains("q3yzpe"), "no secret shown");
    insta::assert_snapshot!("config_kubelet_open", text);
}

#[test]
fn config_before_the_read_and_a_readers_refusal() {
    insta::assert_snapshot!("config_reading", all_renders(&opened(None)));
    let refusal = "context \"healthy-reader\": node w-1: reading the machine configuration needs os:admin (MachineConfigs is a sensitive resource); this context's certificate has os:reader";
    let s = opened(Some(Err(refusal.into())));
    insta::assert_snapshot!("config_reader_refused", all_renders(&s));
}
