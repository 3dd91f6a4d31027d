//! Unit tests of the update step: navigation, filter, command line, overlays
//! and the confirmation flow up to the dispatcher's door.
use std::path::PathBuf;

use super::*;
use crate::app::binding::Move;
use crate::app::message::Level;
use crate::app::screen::TableKind;
use crate::approval::{Answer, AuditLog, Dispatcher, Gate, MutatingAction};
use crate::discovery::{Cluster, Discovery, KubeContext, PairedBy};

fn cluster(name: &str, kube: Option<&str>) -> Cluster {
    Cluster {
        name: name.to_string(),
        talos: None,
        kube: kube.map(|k| KubeContext {
            name: k.to_string(),
            file: PathBuf::from("/k"),
            cluster: name.to_string(),
            user: "admin".into(),
            server: Some("https://127.0.0.1:6443".into()),
        }),
        paired_by: Some(PairedBy::Name),
        ..Default::default()
    }
}

fn state() -> AppState {
    let discovery = Discovery {
        clusters: vec![
            cluster("prod-eu", Some("admin@prod-eu")),
            cluster("prod-us", Some("admin@prod-us")),
            cluster("staging", Some("ops-lab")),
        ],
        ..Discovery::default()
    };
    let mut state = AppState::new(discovery, false);
    // These tests are about the discovery list (`:contexts`).
    state.screen = crate::app::screen::Screen::Clusters;
    state
}

/// The discovery list's selected cluster.
fn selected(s: &AppState) -> Option<String> {
    crate::app::tables::selected_key(s, crate::app::screen::TableKind::Clusters)
}

/// The clusters the discovery list shows, in its order.
fn listed(s: &AppState) -> Vec<String> {
    let data = crate::app::tables::table(s, crate::app::screen::TableKind::Clusters);
    data.rows.into_iter().map(|r| r.key).collect()
}

fn type_text(s: &mut AppState, text: &str) {
    for c in text.chars() {
        update(s, Action::Insert(c));
    }
}

#[test]
fn moves_within_bounds() {
    let mut s = state();
    update(&mut s, Action::Move(Move::Up));
    assert_eq!(selected(&s).as_deref(), Some("prod-eu"));
    for _ in 0..5 {
        update(&mut s, Action::Move(Move::Down));
    }
    assert_eq!(selected(&s).as_deref(), Some("staging"));
    update(&mut s, Action::Move(Move::First));
    assert_eq!(selected(&s).as_deref(), Some("prod-eu"));
    update(&mut s, Action::Move(Move::Last));
    assert_eq!(selected(&s).as_deref(), Some("staging"));
}

#[test]
fn quit_is_an_effect() {
    let mut s = state();
    assert!(matches!(update(&mut s, Action::Quit)[..], [Effect::Quit]));
}

#[test]
fn filter_matches_names_and_contexts_case_insensitively() {
    let mut s = state();
    update(&mut s, Action::OpenFilter);
    type_text(&mut s, "LAB");
    assert_eq!(listed(&s), vec!["staging"]);
    update(&mut s, Action::Submit);
    assert!(s.input.is_none());
    assert_eq!(s.tables.get(TableKind::Clusters).filter, "LAB");
    // Esc on the list clears the kept filter.
    update(&mut s, Action::Back);
    assert_eq!(listed(&s).len(), 3);
}

#[test]
fn esc_in_filter_clears_it() {
    let mut s = state();
    update(&mut s, Action::OpenFilter);
    type_text(&mut s, "prod");
    update(&mut s, Action::Move(Move::Down));
    assert_eq!(listed(&s).len(), 2);
    update(&mut s, Action::Back);
    assert!(s.input.is_none());
    assert!(s.tables.get(TableKind::Clusters).filter.is_empty());
}

#[test]
fn ctx_command_uses_a_cluster() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    type_text(&mut s, "ctx st");
    update(&mut s, Action::Complete);
    assert_eq!(
        s.input.as_ref().map(|l| l.text.as_str()),
        Some("ctx staging")
    );
    update(&mut s, Action::Submit);
    assert_eq!(s.current.as_deref(), Some("staging"));
    assert_eq!(selected(&s).as_deref(), Some("staging"));
    assert!(s.input.is_none());

    update(&mut s, Action::OpenCommandLine);
    type_text(&mut s, "ctx nowhere");
    update(&mut s, Action::Submit);
    assert_eq!(s.current.as_deref(), Some("staging"));
    assert_eq!(s.message.as_ref().map(|m| m.level), Some(Level::Error));
}

/// `:ctx lab-reader` (an alternate context of `lab`): the cluster uses that context from now
/// on, in the state the header and plans read and in the poller, which is told to switch;
/// naming the context again changes nothing and asks the poller for nothing.
#[test]
fn ctx_naming_an_alternate_context_switches_the_cluster_and_its_poller() {
    use crate::app::test_fixtures::{console_of, discovered};
    let mut lab = discovered("lab");
    let mut reader = discovered("lab-reader");
    reader.name = "lab".into();
    lab.alternate_talos = reader.talos.take().into_iter().collect();
    let mut s = console_of(vec![lab, discovered("other")]);
    let run = |s: &mut AppState, line: &str| {
        update(s, Action::OpenCommandLine);
        type_text(s, line);
        update(s, Action::Submit)
    };
    let effects = run(&mut s, "ctx lab-reader");
    let asked: Vec<&PollerCommand> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Poller(r) => Some(r),
            _ => None,
        })
        .collect();
    assert!(
        asked.contains(&&PollerCommand::UseContext {
            cluster: "lab".into(),
            context: "lab-reader".into()
        }),
        "{effects:?}"
    );
    assert!(asked.contains(&&PollerCommand::Focus(Some("lab".into()))));
    assert_eq!(s.current.as_deref(), Some("lab"));
    let lab = &s.clusters[0];
    assert_eq!(lab.talos_context(), Some("lab-reader"));
    assert_eq!(lab.alternate_contexts(), ["lab"]);
    let said = s
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("through context lab-reader"), "{said}");

    let again = run(&mut s, "ctx lab-reader");
    assert!(
        !again
            .iter()
            .any(|e| matches!(e, Effect::Poller(PollerCommand::UseContext { .. }))),
        "{again:?}"
    );
    let back = run(&mut s, "ctx lab");
    assert!(
        back.iter()
            .any(|e| matches!(e, Effect::Poller(PollerCommand::UseContext { context, .. }) if context == "lab")),
        "{back:?}"
    );
    assert_eq!(s.clusters[0].talos_context(), Some("lab"));
}

#[test]
fn q_command_quits_and_typed_q_does_not() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    type_text(&mut s, "q");
    assert!(s.input.is_some());
    assert!(matches!(update(&mut s, Action::Submit)[..], [Effect::Quit]));
}

#[test]
fn unknown_command_is_an_error_message() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    type_text(&mut s, "nodez");
    assert!(update(&mut s, Action::Submit).is_empty());
    let msg = s.message.expect("a message");
    assert_eq!(msg.level, Level::Error);
    assert!(msg.text.contains(":nodez"));
}

#[test]
fn pasted_newline_does_not_submit() {
    let mut s = state();
    update(&mut s, Action::OpenCommandLine);
    let effects = update(&mut s, Action::Paste("q\nrm -rf".into()));
    assert!(effects.is_empty());
    assert_eq!(s.input.as_ref().map(|l| l.text.as_str()), Some("q"));
}

#[test]
fn help_and_errors_overlays_close_with_back() {
    let mut s = state();
    update(&mut s, Action::Overlay(Overlay::Help { scroll: 0 }));
    update(&mut s, Action::Move(Move::Down));
    assert_eq!(s.overlay, Some(Overlay::Help { scroll: 1 }));
    update(&mut s, Action::Back);
    assert_eq!(s.overlay, None);
    update(&mut s, Action::Overlay(Overlay::Errors { scroll: 0 }));
    assert_eq!(s.overlay, Some(Overlay::Errors { scroll: 0 }));
    // Keys in an overlay do not move the list underneath.
    update(&mut s, Action::Move(Move::Down));
    assert_eq!(selected(&s).as_deref(), Some("prod-eu"));
}

#[test]
fn confirmation_flow_goes_through_effects() {
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let upgrade = MutatingAction::UpgradeTalos {
        cluster: "prod-eu".into(),
        target: "v1.12.0".into(),
    };
    let mut s = state();
    let Gate::Confirm(pending) = d.request(upgrade.clone()) else {
        panic!("expected a confirmation")
    };
    update(&mut s, Action::AskConfirmation(pending));
    type_text(&mut s, "prod-e");
    // Esc cancels whatever was typed.
    let effects = update(&mut s, Action::Back);
    assert!(matches!(&effects[..], [Effect::Answer(_, Answer::Cancel)]));
    assert_eq!(s.overlay, None);

    let Gate::Confirm(pending) = d.request(upgrade) else {
        panic!()
    };
    update(&mut s, Action::AskConfirmation(pending));
    type_text(&mut s, "prod-eux");
    update(&mut s, Action::DeleteBack);
    let effects = update(&mut s, Action::Submit);
    let [Effect::Answer(_, Answer::Typed(typed))] = &effects[..] else {
        panic!("{effects:?}")
    };
    assert_eq!(typed, "prod-eu");
}

#[test]
fn reload_replaces_clusters_and_keeps_selection() {
    let mut s = state();
    update(&mut s, Action::Move(Move::Down));
    s.current = Some("prod-eu".into());
    let discovery = Discovery {
        clusters: vec![cluster("new", None), cluster("prod-us", None)],
        ..Discovery::default()
    };
    update(
        &mut s,
        Action::Event(AppEvent::Discovered(Box::new(discovery))),
    );
    assert_eq!(selected(&s).as_deref(), Some("prod-us"));
    assert_eq!(s.current, None, "a cluster that vanished is not in use");
}

/// `:ctx` takes a context's name as well as a cluster's, so Tab completes both: a kube context
/// named unlike its cluster, and an alternate talos context.
#[test]
fn tab_after_ctx_completes_context_names_too() {
    let mut s = state();
    s.clusters[0].alternate_talos = vec![crate::discovery::TalosContext {
        name: "prod-eu-reader".into(),
        file: PathBuf::from("/t"),
        endpoints: Vec::new(),
        nodes: Vec::new(),
        ca_pem: String::new(),
        crt_pem: String::new(),
        key_pem: String::new(),
    }];
    let tab = |s: &mut AppState, typed: &str| -> (String, Vec<String>) {
        update(s, Action::OpenCommandLine);
        type_text(s, typed);
        update(s, Action::Complete);
        let line = s.input.clone().expect("the command line stays open");
        update(s, Action::Back);
        (line.text, line.candidates)
    };
    let (line, candidates) = tab(&mut s, "ctx ops");
    assert_eq!((line.as_str(), candidates.len()), ("ctx ops-lab", 0));
    let (line, candidates) = tab(&mut s, "ctx prod-eu");
    assert_eq!(line, "ctx prod-eu");
    assert_eq!(candidates, ["prod-eu", "prod-eu-reader"]);
    let (line, candidates) = tab(&mut s, "ctx admin@");
    assert_eq!(line, "ctx admin@prod-");
    assert_eq!(candidates, ["admin@prod-eu", "admin@prod-us"]);

    update(&mut s, Action::OpenCommandLine);
    type_text(&mut s, "ctx ops");
    update(&mut s, Action::Complete);
    update(&mut s, Action::Submit);
    assert_eq!(
        s.current.as_deref(),
        Some("staging"),
        "the context's cluster"
    );
}
