//! Shared set-up for the rolling-upgrade tests: a sim on loopback at a big time scale, the
//! clusters discovery finds in its talosconfig and kubeconfig, a confirmed action from the
//! dispatcher, the runner started on a plan, `taloscope` run as a process, and bounded waits
//! for a step or a rollout's end.
#![allow(dead_code)]
use std::process::Stdio;
use std::time::Duration;

use taloscope::approval::{
    Answer, ApprovedAction, AuditLog, Dispatcher, Gate, MutatingAction, Verdict,
};
use taloscope::discovery::{Cluster, Discovery, Sources, discover};
use taloscope::fleet::ClusterStatus;
use taloscope::operation::upgrade::{TalosUpgradeRun, spawn_talos_upgrade};
use taloscope::rollout::{RolloutEvent, RolloutOutcome, StepPhase};
use taloscope::talos::{ClientOptions, TalosClient};
use taloscope::upgrade::observe::ClusterObserver;
use taloscope::upgrade::{RolloutHandle, RunOptions, UpgradeOptions, UpgradePlan};
use taloscope::versions::Version;
use taloscope_sim::{Scenario, SimFleet, SimOptions};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::Command;
use tokio::process::{ChildStderr, ChildStdout};
use tokio::sync::mpsc::UnboundedReceiver;

/// Simulated seconds per real second: a 24 s reboot takes about 0.12 s.
pub const TIME_SCALE: f64 = 200.0;

/// The longest any one rollout, step or command may take before a test fails.
pub const LIMIT: Duration = Duration::from_secs(90);

pub struct Fixture {
    pub sim: SimFleet,
    pub dir: tempfile::TempDir,
    pub discovery: Discovery,
}

pub async fn start(scenario: Scenario) -> Fixture {
    start_scaled(scenario, TIME_SCALE).await
}

/// [`start`] at `time_scale` simulated seconds per real one: slower, for a test that must see
/// a short-lived state (a restart window) even on a loaded machine.
#[allow(dead_code)]
pub async fn start_scaled(scenario: Scenario, time_scale: f64) -> Fixture {
    taloscope::install_crypto_provider();
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = SimOptions {
        state_dir: dir.path().join("sim"),
        time_scale,
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
        stream_open_timeout: Duration::from_secs(10),
        concurrency: 32,
    }
}

impl Fixture {
    /// The cluster whose talosconfig context is `context`.
    pub fn cluster(&self, context: &str) -> Cluster {
        self.discovery
            .select(context)
            .unwrap_or_else(|| panic!("cluster for context {context}"))
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

    /// The worker nodes of the cluster of `context`, as its Kubernetes API lists them.
    pub async fn workers(&self, context: &str) -> Vec<taloscope::kube::KubeNode> {
        let nodes = self
            .kube(context)
            .await
            .nodes()
            .await
            .expect("workload nodes");
        nodes
            .into_iter()
            .filter(|n| !n.roles.iter().any(|r| r == "control-plane"))
            .collect()
    }

    /// Another console, `bob@jump2`, holding the Talos rollout lease of the cluster of
    /// `context` for ten minutes.
    pub async fn lease_held_by_bob(&self, context: &str) -> taloscope::fleet::RolloutLease {
        self.kube(context)
            .await
            .acquire_rollout_lease(
                context,
                "bob@jump2",
                None,
                (taloscope::rollout::RolloutKind::TalosUpgrade, "v1.12.0", 5),
                Duration::from_secs(600),
            )
            .await
            .expect("bob takes the lease")
    }

    /// The talos client of the cluster of talos context `context`.
    pub fn talos(&self, context: &str) -> TalosClient {
        let cluster = self.cluster(context);
        TalosClient::new(cluster.talos.as_ref().expect("talos"), fast()).expect("client")
    }

    /// Live status the way the runner reads it.
    pub async fn status(&self, context: &str) -> ClusterStatus {
        let cluster = self.cluster(context);
        let talos = self.talos(context);
        let kube = match &cluster.kube {
            Some(_) => Some(self.kube(context).await),
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

    /// The dispatcher's approval of a Talos upgrade, the operator typing the cluster name.
    pub fn approve(&self, cluster: &str, target: &str) -> ApprovedAction {
        self.approve_action(
            cluster,
            MutatingAction::UpgradeTalos {
                cluster: cluster.into(),
                target: target.into(),
            },
        )
    }

    /// The dispatcher's approval of a Kubernetes upgrade, the operator typing the cluster name.
    pub fn approve_k8s(&self, cluster: &str, target: &str) -> ApprovedAction {
        self.approve_action(
            cluster,
            MutatingAction::UpgradeKubernetes {
                cluster: cluster.into(),
                target: target.into(),
            },
        )
    }

    /// The dispatcher of the fixture's audit log.
    pub fn dispatcher(&self) -> Dispatcher {
        Dispatcher::new(false, AuditLog::new(self.state_dir().join("audit.log")))
    }

    fn approve_action(&self, cluster: &str, action: MutatingAction) -> ApprovedAction {
        let d = self.dispatcher();
        let Gate::Confirm(p) = d.request(action) else {
            panic!("not asked to confirm");
        };
        match d.answer(p, Answer::Typed(cluster.into())) {
            Verdict::Proceed(a) => a,
            Verdict::Cancelled(why) => panic!("not approved: {why}"),
        }
    }

    /// The approved Talos upgrade of `plan` on the cluster of talos context `context`, with the
    /// test options and no acknowledgements.
    pub fn talos_run(&self, context: &str, target: &str, plan: UpgradePlan) -> TalosUpgradeRun {
        TalosUpgradeRun {
            approved: self.approve(context, target),
            dispatcher: self.dispatcher(),
            plan,
            acks: vec![],
            cluster: self.cluster(context),
            options: self.options(),
        }
    }

    /// `taloscope --context <context> <subcommand>` against the sim's configs, with the state
    /// under the fixture's directory, no release registry, and nothing from the caller's
    /// environment.
    pub fn taloscope(&self, context: &str, subcommand: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_taloscope"));
        cmd.env_remove("KUBECONFIG")
            .env_remove("TALOSCONFIG")
            .env_remove("TALOSCOPE_CONFIG")
            .env("HOME", self.dir.path())
            .env("TALOSCOPE_STATE_DIR", self.state_dir())
            // No registry unless a test starts one: tests never reach ghcr.io.
            .env("TALOSCOPE_RELEASES_REGISTRY", "off")
            .arg("--talosconfig")
            .arg(self.sim.talosconfig_path())
            .arg("--kubeconfig")
            .arg(self.sim.kubeconfig_path())
            .args(["--context", context, subcommand])
            .kill_on_drop(true);
        cmd
    }
}

/// The guard `id` of a `--plan --output json` plan.
pub fn plan_guard<'a>(plan: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    plan["guards"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["id"] == id))
        .unwrap_or_else(|| panic!("guard {id} in {plan}"))
}

/// Starts the Talos runner; returns its handle and its events.
pub fn spawn_talos(run: TalosUpgradeRun) -> (RolloutHandle, UnboundedReceiver<RolloutEvent>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (spawn_talos_upgrade(run, tx), rx)
}

/// Runs the Talos runner to its end (bounded); returns the outcome and every event.
pub async fn run_talos(run: TalosUpgradeRun) -> (RolloutOutcome, Vec<RolloutEvent>) {
    let (handle, mut rx) = spawn_talos(run);
    finish(handle, &mut rx, LIMIT).await
}

/// Waits (bounded) for step `index` to reach `phase`; returns the events seen until then.
pub async fn wait_for_step(
    rx: &mut UnboundedReceiver<RolloutEvent>,
    index: usize,
    phase: StepPhase,
) -> Vec<RolloutEvent> {
    let mut seen = Vec::new();
    let wait = async {
        while let Some(e) = rx.recv().await {
            let hit = matches!(&e, RolloutEvent::Step { index: i, progress, .. }
                if *i == index && progress.phase == phase);
            seen.push(e);
            if hit {
                return;
            }
        }
        panic!("rollout ended before step {index} reached {phase:?}: {seen:#?}");
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("step {index} did not reach {phase:?}"));
    seen
}

/// The arguments of a confirmed, unattended run to `target` on `cluster`, polling quickly.
pub fn confirmed<'a>(target: &'a str, cluster: &'a str) -> [&'a str; 7] {
    [
        "--to",
        target,
        "--yes",
        "--confirm",
        cluster,
        "--poll-ms",
        "40",
    ]
}

/// Runs a `taloscope` process to its end (bounded): exit code, stdout, stderr.
pub async fn output(mut cmd: Command) -> (Option<i32>, String, String) {
    let out = tokio::time::timeout(LIMIT, cmd.output())
        .await
        .expect("taloscope finishes")
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A progress line without the local time it starts with ("15:20:57 [2/5] ..."),
/// which must be there.
pub fn without_time(line: &str) -> &str {
    let (time, rest) = line.split_once(' ').unwrap_or(("", line));
    let digits = time
        .split(':')
        .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()));
    assert!(time.len() == 8 && digits, "no HH:MM:SS before {line:?}");
    rest
}

/// Spawns a `taloscope` process and reads its stdout (bounded) up to and including the first
/// line starting with `stop`; returns the child, still running, and the lines read.
pub async fn run_until_line(mut cmd: Command, stop: &str) -> (tokio::process::Child, Vec<String>) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let seen = tokio::time::timeout(LIMIT, async {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            let hit = line.get(9..).is_some_and(|rest| rest.starts_with(stop));
            seen.push(line);
            if hit {
                break;
            }
        }
        seen
    })
    .await
    .unwrap_or_else(|_| panic!("no line starting {stop} within {LIMIT:?}"));
    (child, seen)
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
        .filter(|w| w.cluster == cluster && w.role == taloscope_sim::NodeRole::ControlPlane)
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

/// `taloscope status --output json` for `context`, which must succeed.
pub async fn status_json(fx: &Fixture, context: &str) -> serde_json::Value {
    let mut cmd = fx.taloscope(context, "status");
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    serde_json::from_str(&stdout).expect("status json")
}

/// The names (`metadata.name`) of Kubernetes objects.
pub fn object_names(v: &[serde_json::Value]) -> std::collections::BTreeSet<String> {
    v.iter()
        .filter_map(|m| m["metadata"]["name"].as_str().map(String::from))
        .collect()
}

/// The Machines of a `capi` scenario, once all five have a Ready condition (the sim's
/// controller has settled); bounded by [`LIMIT`].
pub async fn settled_machines(fx: &Fixture) -> Vec<serde_json::Value> {
    let capi = fx.sim.capi().expect("capi scenario");
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let machines = capi.list("machines");
        let ready = machines.len() == 5
            && machines.iter().all(|m| {
                m["status"]["conditions"].as_array().is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
            });
        if ready {
            return machines;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "capi settles: {machines:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `taloscope` process whose stdout and stderr the test reads a line at a time, each wait
/// bounded by [`LIMIT`]; the lines read so far (`seen` from stdout, `said` from stderr) are
/// kept for the test's assertions and messages.
pub struct Watched {
    pub child: tokio::process::Child,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Lines<BufReader<ChildStderr>>,
    pub seen: Vec<String>,
    pub said: Vec<String>,
}

impl Watched {
    pub fn spawn(mut cmd: Command) -> Watched {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let (seen, said) = (Vec::new(), Vec::new());
        Watched {
            child,
            stdout,
            stderr,
            seen,
            said,
        }
    }

    /// Reads stdout up to and including the first progress line starting with `step` once its
    /// time is left out ("[2/5]").
    pub async fn until_step(&mut self, step: &str) {
        let (lines, seen) = (&mut self.stdout, &mut self.seen);
        tokio::time::timeout(LIMIT, async {
            while let Some(line) = lines.next_line().await.expect("read") {
                let hit = without_time(&line).starts_with(step);
                seen.push(line);
                if hit {
                    return;
                }
            }
            panic!("the run ended before {step}: {seen:#?}");
        })
        .await
        .unwrap_or_else(|_| panic!("no {step} within {LIMIT:?}"));
    }

    /// Reads stderr up to and including the first line holding `text`.
    pub async fn until_said(&mut self, text: &str) {
        let (lines, said) = (&mut self.stderr, &mut self.said);
        tokio::time::timeout(LIMIT, async {
            while let Some(line) = lines.next_line().await.expect("read") {
                let hit = line.contains(text);
                said.push(line);
                if hit {
                    return;
                }
            }
            panic!("the run ended without saying {text:?}: {said:#?}");
        })
        .await
        .unwrap_or_else(|_| panic!("{text:?} not said within {LIMIT:?}"));
    }

    /// Sends the process a SIGINT, as Ctrl-C in its terminal would.
    pub fn interrupt(&self) {
        let pid = self.child.id().expect("running").to_string();
        let kill = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill");
        assert!(kill.success());
    }

    /// Reads both streams to their end and waits for the process: its exit code.
    pub async fn end(&mut self) -> Option<i32> {
        let (seen, said) = (&mut self.seen, &mut self.said);
        let (stdout, stderr) = (&mut self.stdout, &mut self.stderr);
        tokio::time::timeout(LIMIT, async {
            while let Some(line) = stdout.next_line().await.expect("read") {
                seen.push(line);
            }
            while let Some(line) = stderr.next_line().await.expect("read") {
                said.push(line);
            }
        })
        .await
        .expect("the run ends within LIMIT");
        self.child.wait().await.expect("exit status").code()
    }
}
