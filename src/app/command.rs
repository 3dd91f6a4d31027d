//! The `:` command line: the list of commands (which help shows), parsing a
//! typed line into a [`Command`], and Tab completion of command names and of
//! the cluster and context names `:ctx` takes.

/// One command as help lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: &'static str,
    /// Argument placeholder, empty when the command takes none.
    pub arg: &'static str,
    pub help: &'static str,
}

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    command("provision", "", "provision new nodes for the cluster in use (the wizard)"),
    command("provisions", "", "the VMs this console provisioned for the cluster in use"),
    command("ctx", "NAME", "use cluster NAME"),
    command("contexts", "", "how discovery paired talos and kube contexts"),
    command("messages", "", "the messages shown so far, newest first, whole"),
    command("errors", "", "show discovery errors"),
    command("etcd", "", "etcd pane of the cluster in use"),
    command("fleet", "", "every cluster, one row each"),
    command("help", "", "show keys and commands"),
    command("nodes", "", "nodes pane of the cluster in use"),
    command("q", "", "quit"),
    command("quit", "", "quit"),
    command("reload", "", "read kubeconfig and talosconfig again"),
    command("rollout", "", "progress of this console's rollout on the cluster in use"),
    command("upgrade", "[vX.Y.Z]", "plan a rolling Talos upgrade of the cluster in use"),
    command("upgrade-k8s", "[VERSION]", "plan a Kubernetes upgrade of the cluster in use"),
    command("versions", "", "versions pane: skew and upgrade targets"),
    command("logs", "SERVICE [NODE...]", "follow a service's logs on the nodes named (none: every node running it)"),
    command("dmesg", "NODE", "follow a node's kernel log"),
    command("health", "", "run the health checks of the cluster in use (a checklist)"),
    command("capi", "", "the cluster in use as Cluster API sees it (clusterctl describe)"),
    command("certs", "", "every certificate of every cluster, soonest end first, with its fix"),
    command("config", "[NODE]", "a node's machine configuration, secrets redacted (none: the selected node)"),
    command("resources", "[NODE]", "a node's CPU, memory, disks, volumes and network (none: the selected node)"),
];

/// One line of [`COMMANDS`].
const fn command(name: &'static str, arg: &'static str, help: &'static str) -> CommandSpec {
    CommandSpec { name, arg, help }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Quit,
    Ctx(String),
    Errors,
    /// `:messages`: the message log.
    Messages,
    Help,
    Reload,
    Fleet,
    Contexts,
    Pane(super::screen::Pane),
    /// `:upgrade [vX.Y.Z]`.
    Upgrade(Option<String>),
    /// `:upgrade-k8s [VERSION]`.
    UpgradeKubernetes(Option<String>),
    Rollout,
    /// `:provision`: the wizard; `:provisions`: the VMs of the cluster in use.
    Provision,
    Provisions,
    /// A screen module with the command's words (`:logs SERVICE [NODE...]`, `:dmesg NODE`:
    /// the `logs` screen).
    Open {
        screen: super::screen_io::ScreenName,
        words: Vec<String>,
    },
    /// `:health`: the health checklist of the cluster in use.
    Health,
    /// `:capi`: the Cluster API tree of the cluster in use.
    Capi,
    /// `:certs`: every certificate of every cluster.
    Certs,
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

/// Parses the text after `:`. Surrounding spaces are ignored.
pub fn parse(line: &str) -> Result<Option<Command>, CommandError> {
    let mut words = line.split_whitespace();
    let Some(name) = words.next() else {
        return Ok(None);
    };
    let rest: Vec<&str> = words.collect();
    let spec = COMMANDS
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| CommandError::Unknown(name.to_string()))?;
    // `[ARG]` is optional.
    let optional = spec.arg.starts_with('[');
    if spec.arg.is_empty() || optional {
        if rest.len() > usize::from(optional) {
            return Err(CommandError::UnexpectedArgument(spec.name));
        }
    } else if rest.is_empty() {
        return Err(CommandError::MissingArgument {
            command: spec.name,
            arg: spec.arg,
        });
    }
    let command = match spec.name {
        "ctx" => Command::Ctx(rest.join(" ")),
        "errors" => Command::Errors,
        "messages" => Command::Messages,
        "help" => Command::Help,
        "reload" => Command::Reload,
        "fleet" => Command::Fleet,
        "contexts" => Command::Contexts,
        "nodes" => Command::Pane(super::screen::Pane::Nodes),
        "etcd" => Command::Pane(super::screen::Pane::Etcd),
        "versions" => Command::Pane(super::screen::Pane::Versions),
        "upgrade" => Command::Upgrade(rest.first().map(|s| s.to_string())),
        "upgrade-k8s" => Command::UpgradeKubernetes(rest.first().map(|s| s.to_string())),
        "rollout" => Command::Rollout,
        "provision" => Command::Provision,
        "provisions" => Command::Provisions,
        "dmesg" if rest.len() > 1 => return Err(CommandError::UnexpectedArgument("dmesg")),
        "logs" | "dmesg" => Command::Open {
            screen: "logs",
            words: line.split_whitespace().map(String::from).collect(),
        },
        "health" => Command::Health,
        "capi" => Command::Capi,
        "certs" => Command::Certs,
        "config" => Command::Open {
            screen: "config",
            words: line.split_whitespace().map(String::from).collect(),
        },
        "resources" => Command::Open {
            screen: "resources",
            words: line.split_whitespace().map(String::from).collect(),
        },
        _ => Command::Quit,
    };
    Ok(Some(command))
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
        assert_eq!(parse("q"), Ok(Some(Command::Quit)));
        assert_eq!(parse(" quit "), Ok(Some(Command::Quit)));
        assert_eq!(
            parse("ctx prod-eu"),
            Ok(Some(Command::Ctx("prod-eu".into())))
        );
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse("nodez"), Err(CommandError::Unknown("nodez".into())));
        assert_eq!(
            parse("etcd"),
            Ok(Some(Command::Pane(crate::app::screen::Pane::Etcd)))
        );
        assert!(matches!(
            parse("ctx"),
            Err(CommandError::MissingArgument { .. })
        ));
        assert_eq!(parse("q now"), Err(CommandError::UnexpectedArgument("q")));
        assert_eq!(parse("upgrade"), Ok(Some(Command::Upgrade(None))));
        assert_eq!(
            parse("upgrade v1.12.0"),
            Ok(Some(Command::Upgrade(Some("v1.12.0".into()))))
        );
        assert_eq!(
            parse("upgrade v1.12.0 now"),
            Err(CommandError::UnexpectedArgument("upgrade"))
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
