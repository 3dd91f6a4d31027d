//! Snapshots of the node resources screen (`:resources w-1`) at 80x24 and 200x50 in default,
//! NO_COLOR and ASCII modes, on what the sim's `ephemeral-full` w-1 answers (its EPHEMERAL
//! 96% full, failing): the top of the document, scrolled to its end, and the screen before
//! the first read arrived; its storage (`s`), network (`n`, and its connections filtered by
//! `/`) and containers (`o`) sections. The figures that move with the node's clock (CPU
//! busy, load, uptime, boot time) are masked.
mod upgrade_common;
mod view_support;

use crossterm::event::KeyCode;
use taloscope::app::screen::Screen;
use taloscope::app::screens::ScreenNews;
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::node_resources::{DEFAULT_SAMPLE_SPAN, NodeIdentity, NodeResources, read_node};
use taloscope::views::resources::{NAME, ResourcesNews, ResourcesScreen};
use upgrade_common::{builtin, start};
use view_support::{all_renders, press, scenarios};

/// What the sim's `ephemeral-full` w-1 answers `node info`'s reads.
async fn w1_of_ephemeral_full() -> NodeResources {
    let fx = start(builtin("ephemeral-full")).await;
    let cluster = fx.cluster("ephemeral-full");
    let kube = taloscope::fleet::kube_client_for(&cluster, fx.discovery.kubeconfig.as_ref())
        .await
        .map(|k| k.expect("kube client"));
    // The talosconfig lists cp-1, cp-2, cp-3, w-1, w-2.
    let talos = cluster.talos.as_ref().expect("a talosconfig context");
    let id = NodeIdentity {
        name: "w-1".into(),
        address: talos.nodes[3].clone(),
        machine_type: "worker".into(),
    };
    read_node(
        &fx.talos("ephemeral-full"),
        kube.as_ref(),
        &id,
        DEFAULT_SAMPLE_SPAN,
    )
    .await
    .expect("w-1 reads")
}

/// `:resources w-1` on a cluster like the sim's, with `document` read.
fn opened(document: Option<NodeResources>) -> AppState {
    let mut s = scenarios::state(&["healthy"]);
    update(&mut s, Action::OpenSelected);
    update(&mut s, Action::OpenCommandLine);
    for c in "resources w-1".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(s.screen, Screen::Module(NAME));
    if let Some(document) = document {
        let screen = s.screens.find::<ResourcesScreen>().expect("the screen");
        let reading = screen.node.request.as_ref().expect("a request").reading;
        let news = ResourcesNews {
            reading,
            read: Ok(document),
        };
        update(
            &mut s,
            Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news))),
        );
    }
    s
}

/// Every cell after `label` on the lines holding it, up to the pane's border, as `~`.
fn masked(text: &str, labels: &[&str]) -> String {
    let mask_line = |line: &str| -> String {
        let Some(at) = labels
            .iter()
            .find_map(|l| line.find(l).map(|i| i + l.len()))
        else {
            return line.to_string();
        };
        let (head, tail) = line.split_at(at);
        let end = tail.rfind(['|', '│']).unwrap_or(tail.len());
        let (value, border) = tail.split_at(end);
        let value: String = value
            .chars()
            .map(|c| if c == ' ' { c } else { '~' })
            .collect();
        format!("{head}{value}{border}")
    };
    text.lines().map(mask_line).collect::<Vec<_>>().join("\n")
}

const MOVING: &[&str] = &["MHz, ", "LOAD     ", "UPTIME   "];

#[tokio::test(flavor = "multi_thread")]
async fn resources_of_a_node_whose_ephemeral_is_full() {
    let document = w1_of_ephemeral_full().await;
    let ephemeral = document.volumes.iter().find(|v| v.id == "EPHEMERAL");
    assert_eq!(ephemeral.map(|v| v.level.as_str()), Some("failing"));
    let mut s = opened(Some(document));
    insta::assert_snapshot!("resources_top", masked(&all_renders(&s), MOVING));
    press(&mut s, KeyCode::Char('G'));
    insta::assert_snapshot!("resources_end", masked(&all_renders(&s), MOVING));
}

#[test]
fn resources_before_the_first_read() {
    let s = opened(None);
    insta::assert_snapshot!("resources_reading", all_renders(&s));
}

#[tokio::test(flavor = "multi_thread")]
async fn storage_network_and_containers_of_a_node() {
    let document = w1_of_ephemeral_full().await;
    assert!(!document.containers.is_empty() && !document.connections.is_empty());
    let mut s = opened(Some(document));
    press(&mut s, KeyCode::Char('s'));
    insta::assert_snapshot!("resources_storage", masked(&all_renders(&s), MOVING));
    press(&mut s, KeyCode::Char('n'));
    insta::assert_snapshot!("resources_network", masked(&all_renders(&s), MOVING));
    press(&mut s, KeyCode::Char('/'));
    for c in "listen".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    insta::assert_snapshot!(
        "resources_network_listening",
        masked(&all_renders(&s), MOVING)
    );
    press(&mut s, KeyCode::Char('o'));
    insta::assert_snapshot!("resources_containers", masked(&all_renders(&s), MOVING));
}
