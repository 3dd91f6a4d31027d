//! The `:` command line: the list of commands (which help shows), each parsed from a typed
//! line into the [`Action`] it asks (so a command and a key take one road through update),
//! and Tab completion of command names and of the cluster and context names `:ctx` takes.
use std::borrow::Cow;

use super::action::Action;
use super::screen::{Pane, Screen};
use super::state::Overlay;

/// One command as help lists it, and the action it asks.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub name: &'static str,
    /// Argument placeholder, empty when the command takes none.
    pub arg: &'static str,
    pub help: &'static str,
    /// The action of the words typed, the command's name first.
    act: fn(&[&str]) -> Action,
}

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    command("provision", "", "provision new nodes for the cluster in use (the wizard)", |_| Action::Open("provision")),
    command("provisions", "", "the VMs this console provisioned for the cluster in use", |w| open("progress", w)),
    command("ctx", "NAME", "use cluster NAME", |w| Action::UseCluster(w[1..].join(" "))),
    command("contexts", "", "how discovery paired talos and kube contexts", |_| Action::Show(Screen::Clusters)),
    command("messages", "", "the messages shown so far, newest first, whole", |_| Action::Overlay(Overlay::Messages { scroll: 0 })),
    command("errors", "", "show discovery errors", |_| Action::Overlay(Overlay::Errors { scroll: 0 })),
    command("etcd", "", "etcd pane of the cluster in use", |_| Action::Show(Screen::Cluster(Pane::Etcd))),
    command("fleet", "", "every cluster, one row each", |_| Action::Show(Screen::Fleet)),
    command("help", "", "show keys and commands", |_| Action::Overlay(Overlay::Help { scroll: 0 })),
    command("nodes", "", "nodes pane of the cluster in use", |_| Action::Show(Screen::Cluster(Pane::Nodes))),
    command("q", "", "quit", |_| Action::Quit),
    command("quit", "", "quit", |_| Action::Quit),
    command("reload", "", "read kubeconfig and talosconfig again", |_| Action::Reload),
    command("rollout", "", "progress of this console's rollout on the cluster in use", |w| open("progress", w)),
    command("upgrade", "[vX.Y.Z]", "plan a rolling Talos upgrade of the cluster in use", |w| open("upgrade-plan", w)),
    command("upgrade-k8s", "[VERSION]", "plan a Kubernetes upgrade of the cluster in use", |w| open("kube-plan", w)),
    command("versions", "", "versions pane: skew and upgrade targets", |_| Action::Show(Screen::Cluster(Pane::Versions))),
    command("logs", "SERVICE [NODE...]", "follow a service's logs on the nodes named (none: every node running it)", |w| open("logs", w)),
    command("dmesg", "NODE", "follow a node's kernel log", |w| open("logs", w)),
    command("health", "", "run the health checks of the cluster in use (a checklist)", |_| Action::Open("health")),
    command("capi", "", "the cluster in use as Cluster API sees it (clusterctl describe)", |_| Action::Open("capi")),
    command("certs", "", "every certificate of every cluster, soonest end first, with its fix", |_| Action::Open("certs")),
    command("config", "[NODE]", "a node's machine configuration, secrets redacted (none: the selected node)", |w| open("config", w)),
    command("resources", "[NODE]", "a node's CPU, memory, disks, volumes and network (none: the selected node)", |w| open("resources", w)),
];

/// One line of [`COMMANDS`].
const fn command(
    name: &'static str,
    arg: &'static str,
    help: &'static str,
    act: fn(&[&str]) -> Action,
) -> CommandSpec {
    CommandSpec {
        name,
        arg,
        help,
        act,
    }
}

/// Screen module `screen` with the words typed (`:logs etcd cp-1`).
fn open(screen: super::screen_io::ScreenName, words: &[&str]) -> Action {
    Action::OpenWith(screen, Cow::Owned(words.join(" ")))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command :{0} (Tab completes, ? lists commands)")]
    Unknown(String),
    #[error(":{command} needs {arg}")]
    MissingArgument {
        command: &'static str,
        arg: &'static str,
    },
    #[error(":{0} takes no further argument")]
    UnexpectedArgument(&'static str),
}

/// Parses the text after `:` into the action it asks. Surrounding spaces are ignored.
pub fn parse(line: &str) -> Result<Option<Action>, CommandError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((name, rest)) = words.split_first() else {
        return Ok(None);
    };
    let spec = COMMANDS
        .iter()
        .find(|c| c.name == *name)
        .ok_or_else(|| CommandError::Unknown(name.to_string()))?;
    // `[ARG]` is optional; `:dmesg` takes one node.
    let optional = spec.arg.starts_with('[');
    let one_at_most = spec.arg.is_empty() || optional || spec.name == "dmesg";
    if one_at_most && rest.len() > usize::from(!spec.arg.is_empty()) {
        return Err(CommandError::UnexpectedArgument(spec.name));
    }
    if !spec.arg.is_empty() && !optional && rest.is_empty() {
        return Err(CommandError::MissingArgument {
            command: spec.name,
            arg: spec.arg,
        });
    }
    Ok(Some((spec.act)(&words)))
}

/// The line after Tab, and the candidates to show when it stays ambiguous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub line: String,
    pub candidates: Vec<String>,
}

/// Completes the command name, or the cluster or context name after `ctx `.
pub fn complete(line: &str, clusters: &[&str]) -> Completion {
    let trimmed = line.trim_start();
    if let Some(arg) = trimmed.strip_prefix("ctx ") {
        let arg = arg.trim_start();
        let mut names: Vec<&str> = clusters
            .iter()
            .copied()
            .filter(|n| n.starts_with(arg))
            .collect();
        if names.is_empty() {
            let lower = arg.to_lowercase();
            names = clusters
                .iter()
                .copied()
                .filter(|n| n.to_lowercase().starts_with(&lower))
                .collect();
        }
        return finish("ctx ", arg, &names, "");
    }
    if trimmed.contains(' ') {
        return Completion {
            line: line.to_string(),
            candidates: Vec::new(),
        };
    }
    let names: Vec<&str> = COMMANDS
        .iter()
        .map(|c| c.name)
        .filter(|n| n.starts_with(trimmed))
        .collect();
    let suffix = match names.as_slice() {
        [one] if COMMANDS.iter().any(|c| c.name == *one && !c.arg.is_empty()) => " ",
        _ => "",
    };
    finish("", trimmed, &names, suffix)
}

fn finish(prefix: &str, typed: &str, names: &[&str], suffix: &str) -> Completion {
    match names {
        [] => Completion {
            line: format!("{prefix}{typed}"),
            candidates: Vec::new(),
        },
        [one] => Completion {
            line: format!("{prefix}{one}{suffix}"),
            candidates: Vec::new(),
        },
        many => {
            let common = common_prefix(many);
            let line = if common.len() > typed.len() {
                common
            } else {
                typed.to_string()
            };
            Completion {
                line: format!("{prefix}{line}"),
                candidates: many.iter().map(|s| s.to_string()).collect(),
            }
        }
    }
}

fn common_prefix(names: &[&str]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut end = first.len();
    for n in &names[1..] {
        end = first
            .char_indices()
            .zip(n.chars())
            .take_while(|((_, a), b)| a == b)
            .map(|((i, a), _)| i + a.len_utf8())
            .last()
            .unwrap_or(0)
            .min(end);
    }
    first[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        let parsed = |line| parse(line).map(|a| a.map(|a| format!("{a:?}")));
        assert_eq!(parsed("q"), Ok(Some("Quit".into())));
        assert_eq!(parsed(" quit "), Ok(Some("Quit".into())));
        assert_eq!(
            parsed("ctx prod-eu"),
            Ok(Some("UseCluster(\"prod-eu\")".into()))
        );
        assert_eq!(parsed(""), Ok(None));
        assert_eq!(parsed("nodez"), Err(CommandError::Unknown("nodez".into())));
        assert_eq!(parsed("etcd"), Ok(Some("Show(Cluster(Etcd))".into())));
        assert!(matches!(
            parse("ctx"),
            Err(CommandError::MissingArgument { .. })
        ));
        assert_eq!(parsed("q now"), Err(CommandError::UnexpectedArgument("q")));
        assert_eq!(
            parsed("upgrade"),
            Ok(Some("OpenWith(\"upgrade-plan\", \"upgrade\")".into()))
        );
        assert_eq!(
            parsed("upgrade v1.12.0"),
            Ok(Some(
                "OpenWith(\"upgrade-plan\", \"upgrade v1.12.0\")".into()
            ))
        );
        assert_eq!(
            parsed("upgrade v1.12.0 now"),
            Err(CommandError::UnexpectedArgument("upgrade"))
        );
        assert_eq!(
            parsed("dmesg w-1 w-2"),
            Err(CommandError::UnexpectedArgument("dmesg"))
        );
        assert_eq!(
            parsed("logs etcd cp-1"),
            Ok(Some("OpenWith(\"logs\", \"logs etcd cp-1\")".into()))
        );
    }

    #[test]
    fn completes_commands() {
        let c = complete("ct", &[]);
        assert_eq!(c.line, "ctx ");
        assert!(c.candidates.is_empty());
        let c = complete("q", &[]);
        assert_eq!(c.line, "q");
        assert_eq!(c.candidates, vec!["q", "quit"]);
        assert_eq!(complete("rel", &[]).line, "reload");
        assert_eq!(complete("re", &[]).candidates, vec!["reload", "resources"]);
        assert_eq!(complete("zz", &[]).line, "zz");
    }

    #[test]
    fn completes_cluster_names() {
        let names = ["prod-eu", "prod-us", "staging"];
        assert_eq!(complete("ctx s", &names).line, "ctx staging");
        let c = complete("ctx p", &names);
        assert_eq!(c.line, "ctx prod-");
        assert_eq!(c.candidates, vec!["prod-eu", "prod-us"]);
        assert_eq!(complete("ctx STA", &names).line, "ctx staging");
        assert_eq!(complete("ctx x", &names).line, "ctx x");
    }
}
