//! Shared set-up for the rolling-upgrade tests: a sim on loopback at a big time scale, the
//! clusters discovery finds in its talosconfig and kubeconfig, a confirmed action from the
//! dispatcher, and bounded waits for a rollout's end.
#![allow(dead_code)]
use std::time::Duration;

use taloscope::app::dispatcher::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use taloscope::discovery::{Cluster, Discovery, Sources, discover};
use taloscope::fleet::ClusterStatus;
use taloscope::rollout::{RolloutEvent, RolloutOutcome};
use taloscope::sim::{Scenario, SimFleet, SimOptions};
use taloscope::talos::{ClientOptions, TalosClient};
use taloscope::upgrade::observe::ClusterObserver;
use taloscope::upgrade::{RolloutHandle, RunOptions, UpgradeOptions, UpgradePlan};
use taloscope::versions::Version;
use tokio::sync::mpsc::UnboundedReceiver;

/// Simulated seconds per real second: a 24 s reboot takes about 0.12 s.
pub const TIME_SCALE: f64 = 200.0;

pub struct Fixture {
    pub sim: SimFleet,
    pub dir: tempfile::TempDir,
    pub discovery: Discovery,
}

pub async fn start(scenario: Scenario) -> Fixture {
    taloscope::install_crypto_provider();
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = SimOptions {
        state_dir: dir.path().join("sim"),
        time_scale: TIME_SCALE,
    };
    let sim = tokio::time::timeout(Duration::from_secs(30), SimFleet::start(scenario, opts))
        .await
        .expect("sim starts within 30 s")
        .expect("sim starts");
    let discovery = discover(&Sources {
        talosconfigs: vec![sim.talosconfig_path()],
        kubeconfigs: vec![sim.kubeconfig_path()],
        ..Default::default()
    });
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    Fixture {
        sim,
        dir,
        discovery,
    }
}

pub fn builtin(name: &str) -> Scenario {
    Scenario::builtin(name).unwrap_or_else(|| panic!("built-in scenario {name}"))
}

pub fn fast() -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_secs(3),
        concurrency: 32,
    }
}

impl Fixture {
    /// The cluster whose talosconfig context is `context`.
    pub fn cluster(&self, context: &str) -> Cluster {
        self.discovery
            .clusters
            .iter()
            .find(|c| c.talos_context() == Some(context))
            .unwrap_or_else(|| panic!("cluster for context {context}"))
            .clone()
    }

    pub fn state_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("state")
    }

    pub fn options(&self) -> RunOptions {
        RunOptions {
            node_timeout: Duration::from_secs(20),
            poll_interval: Duration::from_millis(40),
            lease_duration: Duration::from_secs(15),
            state_dir: Some(self.state_dir()),
            kubeconfig: self.discovery.kubeconfig.clone(),
            client: fast(),
            ..RunOptions::default()
        }
    }

    /// The kube client of the cluster paired with talos context `context`.
    pub async fn kube(&self, context: &str) -> taloscope::kube::KubeClient {
        let cluster = self.cluster(context);
        let k = cluster.kube.as_ref().expect("a paired kube context");
        taloscope::kube::KubeClient::new(
            self.discovery.kubeconfig.as_ref().expect("kubeconfig"),
            &k.name,
            Default::default(),
        )
        .await
        .expect("kube client")
    }

    /// Live status the way the runner reads it.
    pub async fn status(&self, context: &str) -> ClusterStatus {
        let cluster = self.cluster(context);
        let talos =
            TalosClient::new(cluster.talos.as_ref().expect("talos"), fast()).expect("client");
        let kube = match &cluster.kube {
            Some(k) => Some(
                taloscope::kube::KubeClient::new(
                    self.discovery.kubeconfig.as_ref().expect("kubeconfig"),
                    &k.name,
                    Default::default(),
                )
                .await
                .expect("kube client"),
            ),
            None => None,
        };
        ClusterObserver {
            cluster: cluster.name.clone(),
            nodes: cluster.nodes().to_vec(),
            talos,
            kube,
            options: Default::default(),
        }
        .status()
        .await
    }

    pub async fn plan(&self, context: &str, target: &str) -> UpgradePlan {
        let status = self.status(context).await;
        let target = Version::parse(target).expect("target");
        UpgradePlan::new(&status, target, UpgradeOptions::default()).expect("plan")
    }

    /// The dispatcher's approval, the operator typing the cluster name.
    pub fn approve(&self, cluster: &str, target: &str) -> ApprovedAction {
        let audit = AuditLog::new(self.state_dir().join("audit.log"));
        let d = Dispatcher::new(false, audit);
        let Gate::Confirm(p) = d.request(MutatingAction::UpgradeTalos {
            cluster: cluster.into(),
            target: target.into(),
        }) else {
            panic!("not asked to confirm");
        };
        match d.answer(p, Answer::Typed(cluster.into())) {
            Verdict::Proceed(a) => a,
            Verdict::Cancelled(why) => panic!("not approved: {why}"),
        }
    }
}

/// Waits (bounded) for the rollout's end; returns the outcome and every event.
pub async fn finish(
    handle: RolloutHandle,
    events: &mut UnboundedReceiver<RolloutEvent>,
    limit: Duration,
) -> (RolloutOutcome, Vec<RolloutEvent>) {
    let outcome = tokio::time::timeout(limit, handle.task)
        .await
        .unwrap_or_else(|_| panic!("rollout did not end within {limit:?}"))
        .expect("rollout task");
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(e);
    }
    (outcome, seen)
}

/// Node versions by name, from the sim itself.
pub fn versions(fx: &Fixture, cluster: &str) -> Vec<(String, String)> {
    let state = fx.sim.state();
    let c = state.cluster(cluster).expect("cluster in sim");
    c.nodes()
        .iter()
        .map(|n| (n.name().to_string(), n.status().talos_version))
        .collect()
}

/// From the sim's record: no two control-plane upgrade windows of a cluster overlapped.
pub fn assert_control_planes_one_at_a_time(fx: &Fixture, cluster: &str) {
    let windows: Vec<_> = fx
        .sim
        .state()
        .upgrade_record()
        .into_iter()
        .filter(|w| w.cluster == cluster && w.role == taloscope::sim::NodeRole::ControlPlane)
        .collect();
    for (i, a) in windows.iter().enumerate() {
        for b in &windows[i + 1..] {
            assert!(
                !a.overlaps(b),
                "{} and {} upgraded at the same time",
                a.node,
                b.node
            );
        }
    }
}
