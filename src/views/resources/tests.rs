//! Unit tests of the resources screen's update: where it opens and for which node, the reads
//! started while it is on top and stopped as it leaves, and news of an earlier opening dropped.
use crossterm::event::KeyCode;

use super::*;
use crate::app::action::{Action, AppEvent, Effect};
use crate::app::screen::{Pane, Screen};
use crate::app::state::AppState;
use crate::app::test_fixtures::{cluster_screen, press};
use crate::app::update::{apply, update};
use crate::upgrade::fixtures;
use crate::views::node_read::NodeTask;

const RESOURCES: Screen = Screen::Module(NAME);

fn tasks(effects: &[Effect]) -> Vec<NodeTask> {
    let tasks = effects.iter().filter_map(|e| match e {
        Effect::Screen(task) => task.get::<NodeTask>().cloned(),
        _ => None,
    });
    tasks.collect()
}

fn screen(s: &AppState) -> &ResourcesScreen {
    s.screens.find::<ResourcesScreen>().expect("the screen")
}

fn command(s: &mut AppState, line: &str) -> Vec<Effect> {
    update(s, Action::OpenCommandLine);
    for c in line.chars() {
        update(s, Action::Insert(c));
    }
    update(s, Action::Submit)
}

fn news(reading: u64, read: Result<NodeResources, String>) -> Action {
    let news = ResourcesNews { reading, read };
    Action::Event(AppEvent::Screen(ScreenNews::new(NAME, news)))
}

#[test]
fn i_in_node_detail_reads_the_node_while_on_top_and_stops_when_it_leaves() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    update(&mut s, Action::OpenSelected);
    assert_eq!(s.screen, Screen::NodeDetail);
    let effects = press(&mut s, KeyCode::Char('i'));
    assert_eq!(s.screen, RESOURCES);
    let started = tasks(&effects);
    let [NodeTask::Follow(request, REFRESH)] = started.as_slice() else {
        panic!("one read started: {effects:?}");
    };
    assert_eq!(request.cluster, "healthy");
    assert_eq!(request.node.name, "cp-1");
    assert_eq!(request.node.machine_type, "controlplane");
    // A key that changes nothing starts nothing more.
    assert!(tasks(&press(&mut s, KeyCode::Char('j'))).is_empty());
    let effects = press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen, Screen::NodeDetail);
    assert_eq!(tasks(&effects), [NodeTask::Stop]);
    // Closed, nothing reads, whatever happens next.
    assert!(tasks(&press(&mut s, KeyCode::Char('j'))).is_empty());
}

#[test]
fn news_of_the_current_opening_shows_and_of_an_earlier_one_is_dropped() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    command(&mut s, "resources cp-1");
    let first = screen(&s).node.request.clone().expect("a request").reading;
    command(&mut s, "resources w-1");
    let request = screen(&s).node.request.clone().expect("a request");
    assert_eq!(request.node.name, "w-1");
    assert_ne!(request.reading, first);
    assert!(!apply(&mut s, news(first, Err("late".into()))).redraw);
    assert_eq!(screen(&s).node.error, None);
    let why = "node w-1: SystemStat: unavailable";
    assert!(apply(&mut s, news(request.reading, Err(why.into()))).redraw);
    assert_eq!(screen(&s).node.error.as_deref(), Some(why));
}

#[test]
fn a_node_not_in_the_cluster_or_none_selected_is_named_and_nothing_opens() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Etcd);
    let effects = command(&mut s, "resources nope");
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    assert!(tasks(&effects).is_empty());
    let said = s.message.as_ref().expect("a message").text.clone();
    assert!(
        said.contains("no node named \"nope\"") && said.contains("cp-1"),
        "{said}"
    );
    command(&mut s, "resources");
    assert_eq!(s.screen, Screen::Cluster(Pane::Etcd));
    let said = s.message.as_ref().expect("a message").text.clone();
    assert!(said.contains(":resources NODE"), "{said}");
}

#[test]
fn p_shows_the_processes_and_c_and_m_sort_them() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    command(&mut s, "resources w-1");
    assert_eq!(screen(&s).section, Section::Overview);
    press(&mut s, KeyCode::Char('p'));
    assert_eq!(screen(&s).section, Section::Processes);
    press(&mut s, KeyCode::Char('m'));
    assert_eq!(screen(&s).sort, SortKey::Memory);
    press(&mut s, KeyCode::Char('c'));
    assert_eq!(screen(&s).sort, SortKey::Cpu);
    press(&mut s, KeyCode::Char('p'));
    assert_eq!(screen(&s).section, Section::Overview);
    assert_eq!(s.screen, RESOURCES);
}

#[test]
fn s_n_and_o_show_storage_network_and_containers_and_their_key_again_goes_back() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    command(&mut s, "resources w-1");
    for (key, section) in [
        ('s', Section::Storage),
        ('n', Section::Network),
        ('o', Section::Containers),
        ('p', Section::Processes),
    ] {
        press(&mut s, KeyCode::Char(key));
        assert_eq!(screen(&s).section, section, "{key}");
        press(&mut s, KeyCode::Char(key));
        assert_eq!(screen(&s).section, Section::Overview, "{key} again");
    }
    press(&mut s, KeyCode::Char('n'));
    press(&mut s, KeyCode::Char('o'));
    assert_eq!(
        screen(&s).section,
        Section::Containers,
        "from one to another"
    );
    // c and m sort only the processes.
    press(&mut s, KeyCode::Char('m'));
    assert_eq!(screen(&s).sort, SortKey::Cpu);
    // Esc goes back to the overview first, then where the screen was opened.
    press(&mut s, KeyCode::Esc);
    assert_eq!(
        (s.screen, screen(&s).section),
        (RESOURCES, Section::Overview)
    );
    press(&mut s, KeyCode::Esc);
    assert_ne!(s.screen, RESOURCES);
}

#[test]
fn slash_in_the_network_filters_the_connections_by_state_and_port() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    command(&mut s, "resources w-1");
    press(&mut s, KeyCode::Char('/'));
    assert!(
        s.input.is_none(),
        "/ filters the network's connections only"
    );
    press(&mut s, KeyCode::Char('n'));
    press(&mut s, KeyCode::Char('/'));
    assert!(s.input.is_some(), "the filter line opens");
    for c in "established 6443".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    let filter = &screen(&s).connections;
    assert_eq!(filter.state.as_deref(), Some("ESTABLISHED"));
    assert_eq!(filter.port, Some(6443));
    assert_eq!(filter.text(), "ESTABLISHED 6443");
    assert_eq!(ConnectionFilter::parse(""), ConnectionFilter::default());
}

#[test]
fn t_shows_the_processes_as_a_tree_and_slash_filters_them_by_command_line() {
    let mut s = cluster_screen(fixtures::healthy(), Pane::Nodes);
    command(&mut s, "resources w-1");
    press(&mut s, KeyCode::Char('t'));
    assert!(!screen(&s).tree, "t works in the processes only");
    press(&mut s, KeyCode::Char('p'));
    press(&mut s, KeyCode::Char('t'));
    assert!(screen(&s).tree);
    press(&mut s, KeyCode::Char('/'));
    for c in "stress".chars() {
        update(&mut s, Action::Insert(c));
    }
    update(&mut s, Action::Submit);
    assert_eq!(screen(&s).process_filter, "stress");
    assert_eq!(screen(&s).connections, ConnectionFilter::default());
    press(&mut s, KeyCode::Char('t'));
    assert!(!screen(&s).tree);
}
