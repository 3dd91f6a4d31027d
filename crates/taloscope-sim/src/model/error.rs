//! What can go wrong loading a scenario or starting the sim: one error type for the whole
//! crate, named in the model so every layer can return it.
use std::path::PathBuf;

/// What can go wrong loading a scenario or starting the sim.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("unknown scenario {name:?}: not a built-in ({builtins}) and no such file")]
    UnknownScenario { name: String, builtins: String },
    #[error("cannot read scenario file {}: {source}", path.display())]
    ReadScenario {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("scenario file {}, line {line}: {message}", path.display())]
    ScenarioFile {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("time scale {0} must be a finite number above 0")]
    TimeScale(f64),
    #[error("certificates: {0}")]
    Pki(String),
    #[error("cannot write {}: {source}", path.display())]
    WriteState {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("node {node} of cluster {cluster} cannot listen on {address}: {source}")]
    Listen {
        cluster: String,
        node: String,
        address: String,
        source: std::io::Error,
    },
    #[error("node {node} cannot join cluster {cluster}: {reason}")]
    Join {
        cluster: String,
        node: String,
        reason: String,
    },
    #[error(
        "{nodes} nodes need about {nodes} open files but the limit is {limit}; raise `ulimit -n`"
    )]
    FileLimit { nodes: usize, limit: u64 },
}
