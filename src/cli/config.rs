//! The machine configuration command lines: `config show` (one node's running configuration,
//! secrets redacted unless revealed), `config drift` (the nodes of each role compared) and
//! `config patch` (a patch rolled out node by node, planned from a dry run on each node).
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::{GateArgs, ReadArgs, SourceArgs, parse_role};
use crate::fleet::NodeRole;

/// `taloscope config`: the machine configuration the nodes run.
#[derive(Args, Debug, Clone)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub verb: ConfigVerb,
}

#[derive(Subcommand, Debug, Clone)]
pub enum ConfigVerb {
    /// One node's running machine configuration (--context, --node), document by document,
    /// every secret shown as `<redacted sha256:…>` unless --reveal (written to the audit
    /// log). Needs os:admin: the resource is sensitive. Exit 0 / 1 refused or unreadable / 2.
    Show(ConfigShowArgs),
    /// The nodes of each role of one cluster (--context) compared section by section,
    /// leaving out what is per node by design (hostname, addresses, certSANs, install disk):
    /// each differing path with the nodes holding each value. Exit 0 none / 1 drift or a node
    /// unread / 2 usage.
    Drift(ReadArgs),
    /// Roll a patch (strategic merge or JSON6902, as talosctl takes them) out node by node:
    /// --plan shows per node the paths it changes and what the node's own dry run says (its
    /// mode, reboot or not, and why) with every guard; --yes --confirm CLUSTER applies it one
    /// node at a time, each back and healthy before the next. Needs os:admin. Exit 0 done /
    /// 1 refused or failed / 2 usage.
    Patch(ConfigPatchArgs),
}

/// How `config show` writes the configuration.
#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConfigOutput {
    /// The documents as one YAML stream.
    #[default]
    Yaml,
    /// `{"cluster","node","address","version","revealed","redacted","documents":[{"kind","name","config"}]}`.
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct ConfigShowArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    /// The node: its name (as `taloscope status` lists it) or its address.
    #[arg(long, value_name = "NODE")]
    pub node: String,
    /// Show the secrets as they are (keys, tokens, the secretbox secret, CA keys); the
    /// reveal is written to the audit log.
    #[arg(long)]
    pub reveal: bool,
    #[arg(long, short, value_enum, default_value_t = ConfigOutput::Yaml)]
    pub output: ConfigOutput,
}

#[derive(Args, Debug, Clone)]
pub struct ConfigPatchArgs {
    /// A patch file (repeat for several, applied in order); a leading `@` is allowed.
    #[arg(long = "patch", value_name = "FILE", required = true)]
    pub patches: Vec<String>,
    /// Only the nodes of this role.
    #[arg(long, value_parser = parse_role(NodeRole::Controlplane, NodeRole::Worker))]
    pub role: Option<NodeRole>,
    /// Only these nodes (names or addresses, comma-separated).
    #[arg(long, value_name = "NODE,...", value_delimiter = ',')]
    pub nodes: Vec<String>,
    #[arg(long, value_enum, default_value_t = crate::talos::ApplyMode::Auto)]
    pub mode: crate::talos::ApplyMode,
    /// How long a node keeps a --mode try change before reverting it (90s, 2m, 1m30s).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    pub try_timeout: Duration,
    /// Seconds each node may take, its return included.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub node_timeout: u64,
    /// Milliseconds between status reads while following a node.
    #[arg(long, value_name = "MS", default_value_t = 2000, hide = true)]
    pub poll_ms: u64,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// `90s`, `2m`, `1m30s`, `1h` or plain seconds, from one second to a day.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration; write e.g. 90s, 2m or 1m30s");
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let n: u64 = number.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        number.clear();
    }
    if !number.is_empty() {
        total = total.saturating_add(number.parse::<u64>().map_err(|_| bad())?);
    }
    if !(1..=86_400).contains(&total) {
        return Err(format!("{text:?}: a try timeout is between 1s and 24h"));
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_writes_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("2x").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("m").is_err());
    }
}
