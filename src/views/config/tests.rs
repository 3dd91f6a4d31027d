//! Unit tests of the machine configuration screen: its sections, where it opens and for
//! which node, one read per opening and per `r`, folding, and news of an earlier read dropped.
use crossterm::event::KeyCode;

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::screen::{Pane, Screen};
use crate::app::state::AppState;
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update::update;
use crate::machine_config::documents;
use crate::upgrade::fixtures;
use crate::views::node_read::{NodeRequest, NodeTask};

const CONFIG: Screen = Screen::Module(NAME);

const TEXT: &str = "version: v1alpha1\ndebug: false\nmachine:\n  type: worker\n  token: abc.def\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.33.1\n    extraArgs:\n      rotate-server-certificates: \"true\"\n  network:\n    hostname: w-1\ncluster:\n  clusterName: healthy\n  network:\n    dnsDomain: cluster.local\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n  - url: https://127.0.0.1:5443\n";

fn node_config() -> NodeConfig {
    let (documents, redacted) = documents("w-1", TEXT, false).expect("parses");
    NodeConfig {
        node: "w-1".into(),
        address: "127.0.0.1".into(),
        version: "1".into(),
        revealed: false,
        redacted,
        documents,
    }
}

fn tasks(effects: &[Effect]) -> Vec<NodeRequest> {
    let tasks = effects.iter().filter_map(|e| match e {
        Effect::Screen(task) => match task.get::<NodeTask>() {
            Some(NodeTask::Read(request)) => Some(request.clone()),
            _ => None,
        },
        _ => None,
    });
    tasks.collect()
}

fn screen(s: &AppState) -> &ConfigScreen {
    s.screens.find::<ConfigScreen>().expect("the screen")
}

fn news(reading: u64, read: Result<NodeConfig, String>) -> Action {
    let news = ConfigNews { reading, read };
    Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news)))
}

#[test]
fn the_v1alpha1_document_folds_by_its_second_level_and_other_documents_whole() {
    let sections = sections(&node_config());
    let paths: Vec<&str> = sections.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "v1alpha1",
            "machine",
            "machine.kubelet",
            "machine.network",
            "cluster",
            "cluster.network",
            "RegistryMirrorConfig docker.io"
        ]
    );
    assert_eq!(sections[0].lines, ["version: v1alpha1", "debug: false"]);
    let machine = &sections[1].lines;
    assert_eq!(machine[0], "type: worker");
    assert!(
        machine[1].starts_with("token: <redacted sha256:"),
        "the token is redacted: {machine:?}"
    );
    assert!(sections.iter().all(|s| !s.open), "every section folded");
}

#[test]
fn m_in_node_detail_reads_the_node_once_and_r_reads_it_again() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    let effects = press(&mut s, KeyCode::Char('m'));
    assert_eq!(s.screen, CONFIG);
    let started = tasks(&effects);
    let [request] = started.as_slice() else {
        panic!("one read started: {effects:?}");
    };
    assert_eq!(
        (request.cluster.as_str(), request.node.name.as_str()),
        ("healthy", "cp-1")
    );
    assert!(tasks(&press(&mut s, KeyCode::Char('j'))).is_empty());
    let again = tasks(&press(&mut s, KeyCode::Char('r')));
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].reading, request.reading + 1);
    // The first read's answer is stale now: dropped.
    update(&mut s, news(request.reading, Ok(node_config())));
    assert!(screen(&s).node.document.is_none());
    update(&mut s, news(again[0].reading, Ok(node_config())));
    assert_eq!(screen(&s).sections.len(), 7);
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::NodeDetail);
}

#[test]
fn config_names_a_node_or_says_which_there_are() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    update(&mut s, Action::OpenCommandLine);
    for c in "config w-9".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_ne!(s.screen, CONFIG);
    let said = s
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(
        said.contains("no node named \"w-9\"") && said.contains("cp-1"),
        "{said}"
    );
}

#[test]
fn enter_folds_the_section_under_the_cursor_and_plus_minus_fold_them_all() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    let reading = tasks(&press(&mut s, KeyCode::Char('m')))[0].reading;
    update(&mut s, news(reading, Ok(node_config())));
    press(&mut s, KeyCode::Char('j'));
    press(&mut s, KeyCode::Char('j'));
    press(&mut s, KeyCode::Enter);
    let kubelet = &screen(&s).sections[2];
    assert!(kubelet.open, "machine.kubelet opened");
    assert_eq!(screen(&s).rows().len(), 7 + kubelet.lines.len());
    // Down into its lines; Enter there folds it and the cursor goes back to its heading.
    press(&mut s, KeyCode::Char('j'));
    press(&mut s, KeyCode::Enter);
    assert!(!screen(&s).sections[2].open);
    assert_eq!(screen(&s).cursor, 2);
    press(&mut s, KeyCode::Char('+'));
    assert!(screen(&s).sections.iter().all(|x| x.open));
    assert_eq!(screen(&s).rows()[screen(&s).cursor].section, 2);
    // A read again keeps the open sections open; a failed one keeps the config shown.
    let reading = tasks(&press(&mut s, KeyCode::Char('r')))[0].reading;
    update(
        &mut s,
        news(
            reading,
            Err("context \"healthy\": node cp-1: timed out".into()),
        ),
    );
    assert!(screen(&s).node.document.is_some() && screen(&s).node.error.is_some());
    press(&mut s, KeyCode::Char('-'));
    assert!(screen(&s).sections.iter().all(|x| !x.open));
}
