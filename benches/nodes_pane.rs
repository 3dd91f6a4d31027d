//! Frame time of the cluster view with a 5,000-node nodes pane at 200x50
//! (the wide layout: nodes across the top, etcd and versions below), rendered
//! into an off-screen buffer as the console does, from prepared data. Target:
//! <= 2 ms (release). Also measured: preparing that data after a change (the
//! loop does it once per change, not per frame). Run:
//! `cargo bench --bench nodes_pane`.
mod support;

use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use taloscope::app::prepared::prepare;
use taloscope::app::screen::{Pane, Screen};
use taloscope::app::state::AppState;
use taloscope::app::{Action, AppEvent, update};
use taloscope::discovery::{Cluster, Discovery, TalosContext};
use taloscope::fleet::{EtcdMemberReport, EtcdReport, FleetEvent, NodeRole, NodeStatus, Quorum};
use taloscope::talos::MachineStage;
use taloscope::views;

const NODES: usize = 5_000;

fn address(i: usize) -> String {
    format!("127.{}.{}.{}", 20 + i / 65_536, (i / 256) % 256, i % 256)
}

fn big_cluster_state() -> AppState {
    let addresses: Vec<String> = (0..NODES).map(address).collect();
    let cluster = Cluster {
        name: "big".into(),
        talos: Some(TalosContext {
            name: "big".into(),
            file: PathBuf::from("/home/op/.talos/config"),
            endpoints: addresses[..3].to_vec(),
            nodes: addresses.clone(),
            ca_pem: String::new(),
            crt_pem: String::new(),
            key_pem: String::new(),
        }),
        kube: None,
        paired_by: None,
        ..Default::default()
    };
    let mut state = AppState::new(
        Discovery {
            clusters: vec![cluster],
            ..Discovery::default()
        },
        false,
    );
    let t0 = Instant::now();
    for (i, addr) in addresses.iter().enumerate() {
        let node = NodeStatus {
            name: if i < 3 {
                format!("cp-{}", i + 1)
            } else {
                format!("w-{:04}", i - 2)
            },
            address: addr.clone(),
            role: if i < 3 {
                NodeRole::Controlplane
            } else {
                NodeRole::Worker
            },
            talos_version: Some(if i % 97 == 0 { "v1.10.7" } else { "v1.11.3" }.into()),
            stage: Some(MachineStage::Running),
            ready: i % 211 != 0,
            kubelet_version: Some("v1.34.1".into()),
            k8s_ready: Some(true),
            cordoned: Some(i % 501 == 0),
            error: (i % 1_009 == 0).then(|| "node unreachable: connection refused".to_string()),
            ..Default::default()
        };
        update(
            &mut state,
            Action::Event(AppEvent::Fleet(FleetEvent::Node {
                cluster: "big".into(),
                node,
                at: t0,
            })),
        );
    }
    let members: Vec<EtcdMemberReport> = (0..3)
        .map(|i| EtcdMemberReport {
            id: format!("{:016x}", 0x3a57_a0c2_d1f4_e801u64 + i),
            hostname: format!("cp-{}", i + 1),
            leader: i == 0,
            healthy: true,
            db_size: Some(25_000_000),
            raft_term: Some(2),
            ..Default::default()
        })
        .collect();
    let quorum = Quorum::of_members(members.iter().map(|m| (m.is_learner, m.healthy)));
    let etcd = EtcdReport {
        members,
        alarms: vec![],
        quorum,
    };
    update(
        &mut state,
        Action::Event(AppEvent::Fleet(FleetEvent::Etcd {
            cluster: "big".into(),
            etcd,
            at: t0,
        })),
    );
    state.current = Some("big".into());
    state.screen = Screen::Cluster(Pane::Nodes);
    state
}

fn bench(c: &mut Criterion) {
    let mut state = big_cluster_state();
    prepare(&mut state);
    let look = support::look();
    let area = Rect::new(0, 0, 200, 50);
    let mut buf = Buffer::empty(area);
    views::render(area, &mut buf, &state, &look);
    let text: String = buf.content().iter().map(|c| c.symbol()).collect();
    assert!(text.contains("w-0001"), "the nodes pane shows the nodes");
    c.bench_function("cluster view, 5,000-node nodes pane, 200x50", |b| {
        b.iter(|| {
            buf.reset();
            views::render(area, &mut buf, &state, &look);
        })
    });
    c.bench_function(
        "preparing the 5,000-node cluster view after a change",
        |b| {
            b.iter(|| {
                state.generation += 1;
                prepare(&mut state);
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
