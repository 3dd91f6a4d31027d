//! Fleet data shaped like the simulator's `healthy`, `cp2-down` and
//! `single-cp` scenarios, made by feeding poller reports through the app's
//! update step as the real loop does. Times are offsets from one instant, so
//! ages ("stale 35s") are the same on every run.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::discovery::{Cluster, Discovery, KubeContext, PairedBy, TalosContext};
use taloscope::fleet::{
    ComponentReport, EtcdMemberReport, EtcdReport, FleetEvent, KubernetesFacts, KubernetesReport,
    NodeRole, NodeStatus, Quorum, RolloutStatus,
};
use taloscope::kube::KubeNode;
use taloscope::talos::{MachineStage, ServiceStatus};

pub const SCENARIOS: [&str; 3] = ["healthy", "cp2-down", "single-cp"];

/// The sim's `mixed` scenario also works here: w-2 runs an older Talos.
pub const MIXED: &str = "mixed";

const TALOS: &str = "v1.11.3";
const KUBERNETES: &str = "v1.34.1";

/// The sim's `healthy-112` (every node on Talos 1.12) and `removed-api`
/// (Kubernetes 1.31, objects stored in APIs 1.32 removes) also work here.
pub const HEALTHY_112: &str = "healthy-112";
pub const REMOVED_API: &str = "removed-api";

/// Every node on a pre-release Talos and Kubernetes: versions longer than
/// the usual seven characters, which the tables must not cut.
pub const PRERELEASE: &str = "prerelease";

/// `single-cp` with etcd's NOSPACE alarm raised on cp-1 (a sim scenario
/// file's `alarm: NOSPACE`), its etcd report made by the collector's own `etcd_report` from what
/// Talos answers (etcd lists the alarm among the member's status errors, with
/// the member id in decimal).
pub const NOSPACE: &str = "etcd-nospace";

fn kubernetes_of(scenario: &str) -> &'static str {
    match scenario {
        REMOVED_API => "v1.31.4",
        PRERELEASE => "v1.35.0-rc.1",
        _ => KUBERNETES,
    }
}
/// How long cp-2 has been down when the snapshots are taken.
const DOWN_FOR: Duration = Duration::from_secs(35);

struct Spec {
    name: &'static str,
    address: String,
    role: NodeRole,
    member_id: &'static str,
}

fn nodes(scenario: &str) -> Vec<Spec> {
    let all: [(&str, NodeRole, &str); 5] = [
        ("cp-1", NodeRole::Controlplane, "3a57a0c2d1f4e801"),
        ("cp-2", NodeRole::Controlplane, "7c1e9b44a0d2f302"),
        ("cp-3", NodeRole::Controlplane, "c4d8e2f6b1a39003"),
        ("w-1", NodeRole::Worker, ""),
        ("w-2", NodeRole::Worker, ""),
    ];
    let single = scenario == "single-cp" || scenario == NOSPACE;
    let keep = |name: &str| !single || name == "cp-1" || name == "w-1";
    all.into_iter()
        .filter(|(n, _, _)| keep(n))
        .enumerate()
        .map(|(i, (name, role, member_id))| Spec {
            name,
            address: format!("127.10.0.{}", i + 1),
            role,
            member_id,
        })
        .collect()
}

pub fn discovery(scenarios: &[&str]) -> Discovery {
    let clusters = scenarios
        .iter()
        .map(|s| {
            let addresses: Vec<String> = nodes(s).into_iter().map(|n| n.address).collect();
            Cluster {
                name: s.to_string(),
                talos: Some(TalosContext {
                    name: s.to_string(),
                    file: PathBuf::from("/home/op/.talos/config"),
                    endpoints: vec!["127.10.0.1".into()],
                    nodes: addresses,
                    ca_pem: String::new(),
                    crt_pem: String::new(),
                    key_pem: String::new(),
                }),
                kube: Some(KubeContext {
                    name: format!("admin@{s}"),
                    file: PathBuf::from("/home/op/.kube/config"),
                    cluster: s.to_string(),
                    user: format!("admin@{s}"),
                    server: Some("https://127.10.0.1:6443".into()),
                }),
                paired_by: Some(PairedBy::Name),
                ..Default::default()
            }
        })
        .collect();
    Discovery {
        clusters,
        ..Discovery::default()
    }
}

fn is_down(scenario: &str, node: &str, late: bool) -> bool {
    late && scenario == "cp2-down" && node == "cp-2"
}

fn node_status(scenario: &str, spec: &Spec, late: bool) -> NodeStatus {
    if is_down(scenario, spec.name, late) {
        return NodeStatus {
            name: spec.name.into(),
            address: spec.address.clone(),
            role: spec.role,
            error: Some(format!(
                "dial tcp {}:50000: connect: connection refused",
                spec.address
            )),
            ..Default::default()
        };
    }
    let talos = if scenario == MIXED && spec.name == "w-2" {
        "v1.10.7"
    } else if scenario == HEALTHY_112 {
        "v1.12.0"
    } else if scenario == PRERELEASE {
        "v1.12.0-beta.1"
    } else {
        TALOS
    };
    NodeStatus {
        name: spec.name.into(),
        address: spec.address.clone(),
        role: spec.role,
        talos_version: Some(talos.into()),
        stage: Some(MachineStage::Running),
        ready: true,
        ..Default::default()
    }
}

/// etcd of `NOSPACE` as the collector builds it from Talos's answers.
fn etcd_with_nospace(specs: &[Spec]) -> EtcdReport {
    use taloscope::talos::{EtcdAlarm, EtcdAlarmKind, EtcdMember, EtcdMemberStatus};
    let cp = specs
        .iter()
        .find(|s| s.role == NodeRole::Controlplane)
        .expect("cp-1");
    let id = u64::from_str_radix(cp.member_id, 16).expect("hex member id");
    let member = EtcdMember {
        id,
        hostname: cp.name.into(),
        peer_urls: vec![],
        client_urls: vec![],
        is_learner: false,
    };
    let status = EtcdMemberStatus {
        member_id: id,
        leader: id,
        db_size: 2_147_483_648,
        db_size_in_use: 2_147_000_000,
        raft_term: 2,
        raft_index: 10_412,
        errors: vec![format!("memberID:{id} alarm:NOSPACE ")],
        ..Default::default()
    };
    let alarm = EtcdAlarm {
        member_id: id,
        kind: EtcdAlarmKind::Nospace,
    };
    taloscope::fleet::collect::etcd_report(
        Some(vec![member]),
        &std::collections::HashMap::from([(id, status)]),
        &[alarm],
        &std::collections::HashMap::new(),
    )
}

fn etcd(scenario: &str, specs: &[Spec], late: bool) -> EtcdReport {
    if scenario == NOSPACE {
        return etcd_with_nospace(specs);
    }
    let members: Vec<EtcdMemberReport> = specs
        .iter()
        .filter(|s| s.role == NodeRole::Controlplane)
        .enumerate()
        .map(|(i, s)| {
            let down = is_down(scenario, s.name, late);
            let db = 24_576_000 + i as i64 * 1_048_576;
            EtcdMemberReport {
                id: s.member_id.into(),
                hostname: s.name.into(),
                is_learner: false,
                leader: i == 0,
                healthy: !down,
                db_size: (!down).then_some(db),
                db_size_in_use: (!down).then_some(db / 2),
                raft_term: (!down).then_some(2),
                raft_index: (!down).then_some(10_412 + i as u64),
                errors: if down {
                    vec![
                        "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
                            .to_string(),
                    ]
                } else {
                    vec![]
                },
            }
        })
        .collect();
    let quorum = Quorum::of_members(members.iter().map(|m| (m.is_learner, m.healthy)));
    EtcdReport {
        members,
        alarms: vec![],
        quorum,
    }
}

fn kubernetes(scenario: &str, specs: &[Spec], late: bool) -> KubernetesFacts {
    let mut components = Vec::new();
    for s in specs.iter().filter(|s| s.role == NodeRole::Controlplane) {
        for name in [
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
        ] {
            components.push(ComponentReport {
                node: s.name.into(),
                name: name.into(),
                version: kubernetes_of(scenario).into(),
                ready: !is_down(scenario, s.name, late),
            });
        }
    }
    let nodes = specs
        .iter()
        .map(|s| KubeNode {
            name: s.name.into(),
            roles: vec![],
            ready: !is_down(scenario, s.name, late),
            conditions: vec![],
            kubelet_version: kubernetes_of(scenario).into(),
            internal_ips: vec![s.address.clone()],
            hostname: Some(s.name.into()),
            taints: vec![],
            unschedulable: false,
            cordoned_by: None,
        })
        .collect();
    KubernetesFacts {
        report: KubernetesReport {
            server_version: Some(kubernetes_of(scenario).into()),
            components,
            kube_proxy_version: Some(kubernetes_of(scenario).into()),
            error: None,
        },
        nodes,
        rollout: None,
        rollout_unread: None,
    }
}

fn services(control_plane: bool) -> Vec<ServiceStatus> {
    let mut ids = vec!["apid", "containerd", "cri", "kubelet", "machined", "udevd"];
    if control_plane {
        ids.extend(["etcd", "trustd"]);
    }
    ids.sort();
    ids.into_iter()
        .map(|id| ServiceStatus {
            id: id.into(),
            state: "Running".into(),
            healthy: Some(true),
            last_message: String::new(),
        })
        .collect()
}

/// One poll round of `scenario` at `at`; `late` is after cp-2 went down.
fn round(scenario: &str, at: Instant, late: bool) -> Vec<FleetEvent> {
    let specs = nodes(scenario);
    let cluster = scenario.to_string();
    let mut events = vec![
        FleetEvent::PollStarted {
            cluster: cluster.clone(),
            at,
        },
        FleetEvent::ClusterInfo {
            cluster: cluster.clone(),
            role: "os:admin".into(),
            error: None,
            at,
        },
    ];
    for s in &specs {
        events.push(FleetEvent::Node {
            cluster: cluster.clone(),
            node: node_status(scenario, s, late),
            at,
        });
    }
    events.push(FleetEvent::Etcd {
        cluster: cluster.clone(),
        etcd: etcd(scenario, &specs, late),
        at,
    });
    events.push(FleetEvent::Kubernetes {
        cluster: cluster.clone(),
        facts: Box::new(kubernetes(scenario, &specs, late)),
        at,
    });
    for s in &specs {
        let down = is_down(scenario, s.name, late);
        events.push(FleetEvent::NodeServices {
            cluster: cluster.clone(),
            node: s.address.clone(),
            services: if down {
                Err(format!("{}: unreachable", s.address))
            } else {
                Ok(services(s.role == NodeRole::Controlplane))
            },
            at,
        });
    }
    events.push(FleetEvent::PollFinished { cluster, at });
    events
}

fn machine_events(scenario: &str, at: Instant) -> Vec<FleetEvent> {
    nodes(scenario)
        .into_iter()
        .flat_map(|s| {
            [
                "machine stage: booting",
                "service etcd: Running",
                "machine stage: running, ready",
            ]
            .into_iter()
            .filter(move |e| !e.contains("etcd") || s.role == NodeRole::Controlplane)
            .map(move |summary| FleetEvent::NodeEvent {
                cluster: scenario.to_string(),
                node: s.address.clone(),
                summary: summary.to_string(),
                at,
                // 2026-11-30T15:20:57Z; the views show UTC unless told a zone.
                unix: 1_796_052_057,
                id: None,
            })
        })
        .collect()
}

/// Every report for `scenarios`: a first round with all nodes up, machine
/// events, and a second round `DOWN_FOR` later (where cp-2 of `cp2-down`
/// no longer answers).
pub fn reports(scenarios: &[&str], t0: Instant) -> Vec<FleetEvent> {
    let mut events = Vec::new();
    for s in scenarios {
        events.extend(round(s, t0, false));
        events.extend(machine_events(s, t0));
        events.extend(round(s, t0 + DOWN_FOR, true));
    }
    events
}

/// The fleet screen with `scenarios` after both rounds, fed through update.
pub fn state(scenarios: &[&str]) -> AppState {
    let screens = taloscope::views::screens();
    let mut state = AppState::new(discovery(scenarios), false).with_screens(screens);
    for event in reports(scenarios, Instant::now()) {
        update(&mut state, Action::Event(AppEvent::Fleet(event)));
    }
    state
}

/// Like `state`, the console's wall clock ticking with the rounds: the first at the machine
/// events' time (15:20:57 UTC), the second `DOWN_FOR` later.
pub fn state_on_the_wall_clock(scenarios: &[&str]) -> AppState {
    const FIRST_ROUND: u64 = 1_796_052_057;
    let t0 = Instant::now();
    let mut state = AppState::new(discovery(scenarios), false);
    for s in scenarios {
        update(&mut state, Action::Event(AppEvent::Tick(FIRST_ROUND)));
        let first = round(s, t0, false).into_iter().chain(machine_events(s, t0));
        for event in first {
            update(&mut state, Action::Event(AppEvent::Fleet(event)));
        }
        let second_round = FIRST_ROUND + DOWN_FOR.as_secs();
        update(&mut state, Action::Event(AppEvent::Tick(second_round)));
        for event in round(s, t0 + DOWN_FOR, true) {
            update(&mut state, Action::Event(AppEvent::Fleet(event)));
        }
    }
    state
}

/// Like `state`, with `rollout` in every Kubernetes report of the cluster
/// `on` (another console holds its rollout Lease).
pub fn state_with_rollout(scenarios: &[&str], on: &str, rollout: &RolloutStatus) -> AppState {
    let screens = taloscope::views::screens();
    let mut state = AppState::new(discovery(scenarios), false).with_screens(screens);
    for mut event in reports(scenarios, Instant::now()) {
        if let FleetEvent::Kubernetes { cluster, facts, .. } = &mut event
            && cluster == on
        {
            facts.rollout = Some(rollout.clone());
        }
        update(&mut state, Action::Event(AppEvent::Fleet(event)));
    }
    state
}
