//! Shared set-up for the Talos client tests: start the simulated fleet on
//! loopback in a temporary state dir, and read its talosconfig contexts.
#![allow(dead_code)]
use std::time::Duration;

use taloscope::discovery::{Sources, TalosContext, discover};
use taloscope::talos::{ClientOptions, TalosClient};
use taloscope_sim::{Scenario, SimFleet, SimOptions};

/// Simulated seconds per real second: a 20 s reboot takes 0.2 s.
pub const TIME_SCALE: f64 = 100.0;

pub struct Sim {
    pub fleet: SimFleet,
    pub dir: tempfile::TempDir,
}

pub fn scenario(name: &str) -> Scenario {
    Scenario::builtin(name).unwrap_or_else(|| panic!("built-in scenario {name}"))
}

pub async fn start(scenario: Scenario) -> Sim {
    start_at(scenario, TIME_SCALE).await
}

/// The sim at `time_scale` (1.0: real time, for tests that must land mid-way).
pub async fn start_at(scenario: Scenario, time_scale: f64) -> Sim {
    taloscope::install_crypto_provider();
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = SimOptions {
        state_dir: dir.path().to_path_buf(),
        time_scale,
    };
    let fleet = tokio::time::timeout(Duration::from_secs(30), SimFleet::start(scenario, opts))
        .await
        .expect("sim starts within 30 s")
        .expect("sim starts");
    Sim { fleet, dir }
}

impl Sim {
    pub fn context(&self, name: &str) -> TalosContext {
        let sources = Sources {
            talosconfigs: vec![self.fleet.talosconfig_path()],
            ..Default::default()
        };
        let discovery = discover(&sources);
        assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
        discovery
            .select(name)
            .and_then(|c| c.talos)
            .filter(|t| t.name == name)
            .unwrap_or_else(|| panic!("context {name} in the sim's talosconfig"))
    }

    pub fn client(&self, name: &str) -> TalosClient {
        TalosClient::new(&self.context(name), fast()).expect("client")
    }

    /// The address of a node by name, from the context's node list order
    /// (cp-1, cp-2, cp-3, w-1, w-2 in the standard clusters).
    pub fn address(&self, context: &str, index: usize) -> String {
        self.context(context).nodes[index].clone()
    }
}

/// Short timeouts: everything is on loopback.
pub fn fast() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_secs(3),
        stream_open_timeout: Duration::from_secs(10),
        concurrency: 32,
    }
}

/// Bounds a test step.
pub async fn within<T>(secs: u64, what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(secs), fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {secs} s"))
}
