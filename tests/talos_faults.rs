//! Faults seen through the client: a down node is Unreachable within the
//! timeouts, a slow node times out alone, endpoints fail over, unhealthy etcd
//! and NOSPACE alarms are reported, and bad certificates are typed TLS errors.
mod talos_common;

use std::time::{Duration, Instant};

use talos_common::{fast, scenario, start, within};
use taloscope::fleet::{CollectOptions, collect_context};
use taloscope::talos::{ClientOptions, EtcdAlarmKind, TalosClient, TalosError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn down_node_is_unreachable_and_the_rest_answer() {
    let sim = start(scenario("cp2-down")).await;
    let client = sim.client("cp2-down");
    let cp2 = sim.address("cp2-down", 1);
    let w1 = sim.address("cp2-down", 3);
    let started = Instant::now();
    match within(10, "call to the down node", client.version(&cp2)).await {
        Err(e @ TalosError::Unreachable { .. }) => {
            assert!(e.to_string().contains(&cp2), "{e}");
            assert!(e.is_unreachable());
        }
        other => panic!("down node answered: {other:?}"),
    }
    assert!(started.elapsed() < fast().connect_timeout * 3 + fast().call_timeout);
    let v = within(10, "call to a live node", client.version(&w1)).await;
    assert_eq!(v.expect("w-1 answers").tag, "v1.11.3");
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_endpoint_down_fails_over() {
    let mut s = scenario("healthy");
    s.clusters[0].nodes[0].faults.down = true; // cp-1, the first endpoint
    let sim = start(s).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    let v = within(15, "failover", client.version(&w1)).await;
    assert_eq!(v.expect("answered through another endpoint").tag, "v1.11.3");
    let current = client.current_endpoint().await.expect("connected");
    assert!(
        !current.starts_with(&format!("{}:", sim.address("healthy", 0))),
        "{current}"
    );
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_node_times_out_alone() {
    let mut s = scenario("healthy");
    s.clusters[0].nodes[3].faults.slow_ms = 3_000; // w-1
    let sim = start(s).await;
    let opts = ClientOptions {
        call_timeout: Duration::from_millis(500),
        ..fast()
    };
    let client = TalosClient::new(&sim.context("healthy"), opts).expect("client");
    let w1 = sim.address("healthy", 3);
    let w2 = sim.address("healthy", 4);
    let started = Instant::now();
    let (slow, quick) = within(10, "both calls", async {
        tokio::join!(client.version(&w1), client.version(&w2))
    })
    .await;
    assert!(
        matches!(slow, Err(TalosError::Timeout { ref node, .. }) if *node == w1),
        "{slow:?}"
    );
    assert!(quick.is_ok(), "{quick:?}");
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        started.elapsed()
    );
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unhealthy_etcd_member_costs_the_tolerance() {
    let mut s = scenario("healthy");
    s.clusters[0].nodes[2].faults.etcd_unhealthy = true; // cp-3
    let sim = start(s).await;
    let opts = CollectOptions {
        client: fast(),
        ..Default::default()
    };
    let status = within(
        20,
        "collect",
        collect_context("healthy", &sim.context("healthy"), &opts),
    )
    .await;
    let cp3 = status
        .etcd
        .members
        .iter()
        .find(|m| m.hostname == "cp-3")
        .expect("cp-3 member");
    assert!(!cp3.healthy, "{cp3:?}");
    assert_eq!(status.etcd.quorum.healthy, 2);
    assert_eq!(status.etcd.quorum.tolerates, 0);
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nospace_alarm_is_listed() {
    let sim = start(scenario("alarm")).await;
    let client = sim.client("alarm");
    let cp1 = sim.address("alarm", 0);
    let cp3 = sim.address("alarm", 2);
    let (alarms, cp3_status) = within(10, "alarm list", async {
        tokio::join!(client.etcd_alarm_list(&cp1), client.etcd_status(&cp3))
    })
    .await;
    let alarms = alarms.expect("alarms");
    let cp3_id = cp3_status.expect("cp-3 status").member_id;
    assert_eq!(alarms.len(), 1, "{alarms:?}");
    assert_eq!(alarms[0].kind, EtcdAlarmKind::Nospace);
    assert_eq!(alarms[0].member_id, cp3_id);
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_certificate_from_another_ca_is_a_tls_error() {
    let mut s = scenario("healthy");
    for n in s.clusters[0].nodes.iter_mut().take(3) {
        n.faults.wrong_ca_cert = true;
    }
    let sim = start(s).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    match within(15, "call", client.version(&w1)).await {
        Err(e @ TalosError::Tls { .. }) => assert!(e.to_string().contains("\"healthy\""), "{e}"),
        other => panic!("expected a TLS error: {other:?}"),
    }
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_endpoint_with_a_bad_certificate_is_skipped() {
    let mut s = scenario("healthy");
    s.clusters[0].nodes[0].faults.wrong_ca_cert = true;
    let sim = start(s).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    let v = within(15, "call", client.version(&w1)).await;
    assert_eq!(v.expect("another endpoint answers").tag, "v1.11.3");
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_certificates_are_tls_errors() {
    let mut s = scenario("healthy");
    s.clusters[0].expired_client_context = true;
    for n in s.clusters[0].nodes.iter_mut().take(3) {
        n.faults.expired_cert = true;
    }
    let sim = start(s).await;
    match TalosClient::new(&sim.context("healthy-expired"), fast()) {
        Err(e @ TalosError::Tls { .. }) => {
            assert!(e.to_string().contains("healthy-expired"), "{e}");
            assert!(e.to_string().contains("expired"), "{e}");
        }
        other => panic!("expired client certificate accepted: {other:?}"),
    }
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    match within(15, "call", client.version(&w1)).await {
        Err(TalosError::Tls { .. }) => {}
        other => panic!("expired server certificate accepted: {other:?}"),
    }
    sim.fleet.shutdown().await;
}

/// A loopback listener that accepts TCP and never speaks TLS: a hung endpoint.
async fn black_hole() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_endpoint_costs_one_connect_timeout() {
    let sim = start(scenario("healthy")).await;
    let (hole, task) = black_hole().await;
    let opts = ClientOptions {
        connect_timeout: Duration::from_millis(300),
        ..fast()
    };
    let mut ctx = sim.context("healthy");
    let w1 = ctx.nodes[3].clone();
    ctx.endpoints.insert(0, hole.clone());
    let client = TalosClient::new(&ctx, opts).expect("client");
    let started = Instant::now();
    let v = within(10, "failover past the hung endpoint", client.version(&w1)).await;
    assert_eq!(v.expect("answered").tag, "v1.11.3");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // Only the hung endpoint: fifty nodes asked at once fail together, not one after another.
    ctx.endpoints = vec![hole];
    let client = TalosClient::new(&ctx, opts).expect("client");
    let nodes: Vec<String> = (0..50).map(|i| format!("127.10.9.{i}")).collect();
    let started = Instant::now();
    let results = within(
        10,
        "fan-out",
        taloscope::talos::fan_out(&nodes, 32, |n| {
            let client = client.clone();
            async move { client.version(&n).await }
        }),
    )
    .await;
    assert!(
        results
            .iter()
            .all(|(_, r)| matches!(r, Err(TalosError::EndpointsUnreachable { .. })))
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    task.abort();
    sim.fleet.shutdown().await;
}
