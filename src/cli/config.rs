//! The machine configuration command lines: `config show` (one node's running configuration,
//! secrets redacted unless revealed) and `config drift` (the nodes of each role compared).
use clap::{Args, Subcommand, ValueEnum};

use super::{OutputFormat, SourceArgs};

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
    Drift(ConfigDriftArgs),
}

impl ConfigVerb {
    pub fn sources(&self) -> &SourceArgs {
        match self {
            ConfigVerb::Show(a) => &a.sources,
            ConfigVerb::Drift(a) => &a.sources,
        }
    }
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
pub struct ConfigDriftArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}
