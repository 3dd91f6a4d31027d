//! Certificates near their end against the sim, on `healthy` with cp-2's apid certificate
//! ending in 20 days (the `expiring_cert` fault): the poller's round reads the
//! `healthy-expiring` context's client certificate (10 days) and what each endpoint and the
//! Kubernetes API server present, and the fleet row of `healthy` warns of both; `certs`
//! lists the served certificates with the endpoint that presented them.
mod upgrade_common;
mod view_support;

use std::time::Duration;

use taloscope::app::{Action, AppEvent, AppState, update};
use taloscope::fleet::cert_expiry::{CertExpiry, ExpiryVerdict};
use taloscope::fleet::{FleetEvent, PollerOptions, spawn_poller};
use tokio::sync::mpsc;
use upgrade_common::*;
use view_support::screen_text_at;

fn scenario() -> taloscope_sim::Scenario {
    let mut scenario = builtin("healthy");
    scenario.clusters[0].nodes[1].faults.expiring_cert = true;
    scenario
}

fn of<'a>(certs: &'a [CertExpiry], certificate: &str) -> Vec<&'a CertExpiry> {
    certs
        .iter()
        .filter(|c| c.certificate == certificate)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_warns_of_the_expiring_context_and_node_certificate() {
    let fx = start(scenario()).await;
    let (tx, mut rx) = mpsc::channel(1024);
    let options = PollerOptions {
        client: fast(),
        ..PollerOptions::default()
    };
    let kubeconfig = fx.discovery.kubeconfig.clone();
    let poller = spawn_poller(vec![fx.cluster("healthy")], kubeconfig, options, tx);
    let mut state = AppState::new(fx.discovery.clone(), false);
    let mut certs = Vec::new();
    let first_round = async {
        while let Some(event) = rx.recv().await {
            if let FleetEvent::Certificates { certs: read, .. } = &event {
                certs = read.clone();
            }
            let finished = matches!(event, FleetEvent::PollFinished { .. });
            update(&mut state, Action::Event(AppEvent::Fleet(event)));
            if finished {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), first_round)
        .await
        .expect("a first round within 60 s");
    poller.shutdown().await;

    let client = of(&certs, "talos client");
    let expiring: Vec<_> = client
        .iter()
        .filter(|c| c.context == "healthy-expiring")
        .collect();
    assert_eq!(expiring.len(), 1, "{certs:#?}");
    assert_eq!(expiring[0].verdict, ExpiryVerdict::Warn);
    assert_eq!(expiring[0].days_left, Some(9));
    let apid = of(&certs, "apid server");
    assert_eq!(apid.len(), 3, "one per endpoint: {certs:#?}");
    let warned: Vec<_> = apid
        .iter()
        .filter(|c| c.verdict == ExpiryVerdict::Warn)
        .collect();
    assert_eq!(warned.len(), 1, "{certs:#?}");
    assert_eq!(warned[0].days_left, Some(19));
    let endpoint = warned[0].endpoint.clone().expect("the endpoint");
    let api = of(&certs, "kubernetes API server");
    assert_eq!(api.len(), 1, "{certs:#?}");
    assert_eq!(api[0].verdict, ExpiryVerdict::Ok, "{certs:#?}");

    let text = screen_text_at(&state, 200, 50);
    assert!(
        text.contains("talos client cert (healthy-expiring) expires in 9d"),
        "{text}"
    );
    assert!(
        text.contains(&format!("apid server cert ({endpoint}) expires in 19d")),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certs_lists_what_the_servers_present() {
    let fx = start(scenario()).await;
    let mut cmd = fx.taloscope("healthy", "certs");
    cmd.args(["--output", "json"]);
    let (code, stdout, stderr) = output(cmd).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let certs: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let served: Vec<&serde_json::Value> = certs
        .as_array()
        .expect("array")
        .iter()
        .filter(|c| c["endpoint"].is_string())
        .collect();
    assert_eq!(served.len(), 4, "3 endpoints and the API server: {stdout}");
    let warned: Vec<_> = served.iter().filter(|c| c["verdict"] == "warn").collect();
    assert_eq!(warned.len(), 1, "{stdout}");
    assert_eq!(warned[0]["certificate"], "apid server");
    assert_eq!(warned[0]["context"], "healthy");
    assert_eq!(warned[0]["days_left"], 19);

    let (code, stdout, _) = output(fx.taloscope("healthy", "certs")).await;
    assert_eq!(code, Some(0));
    let row = stdout
        .lines()
        .find(|l| l.starts_with("WARN") && l.contains("apid server 127."))
        .unwrap_or_else(|| panic!("a WARN apid server row: {stdout}"));
    assert!(row.contains("(in 19 days)"), "{row}");
}
