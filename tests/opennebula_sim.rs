//! The OpenNebula clients over the sim's sockets: XML-RPC calls and their
//! typed faults, and a provision run by the operation runner driving a OneFlow scale-out,
//! reporting each VM's stages in order until the new node has joined.
mod talos_common;

use std::collections::BTreeSet;
use std::time::Duration;

use talos_common::{Sim, fast, scenario, start, within};
use taloscope::approval::{Answer, AuditLog, Dispatcher, Gate, Verdict};
use taloscope::config::{Config, MachineRole};
use taloscope::discovery::{Sources, discover};
use taloscope::kube::KubeClient;
use taloscope::opennebula::auth::OneEnvironment;
use taloscope::opennebula::{Credentials, FailureKind, OneClient};
use taloscope::operation::provision::Provisioning;
use taloscope::operation::{CancelSignal, Runner};
use taloscope::provision::{
    JoinChecks, PlanRequest, PlanSource, ProviderClients, ProvisionEvent, ProvisionRunner,
    ProvisionStage, RunnerOptions, connect, plan,
};

fn sim_config(sim: &Sim) -> Config {
    let one = sim.fleet.opennebula().expect("the sim runs OpenNebula");
    Config::load(&one.config_file(), true).expect("the sim's taloscope.yaml parses")
}

fn xmlrpc(sim: &Sim, password: Option<&str>) -> OneClient {
    let one = sim.fleet.opennebula().expect("one");
    let text = std::fs::read_to_string(one.auth_file()).expect("one_auth");
    let mut creds = Credentials::parse_one_auth(&text).expect("user:password");
    if let Some(p) = password {
        creds = Credentials::new(creds.username.clone(), p);
    }
    OneClient::new("sim", one.xmlrpc_url(), creds, Duration::from_secs(5)).expect("client")
}

#[tokio::test]
async fn xmlrpc_calls_and_typed_faults() {
    let sim = start(scenario("healthy")).await;
    let client = xmlrpc(&sim, None);
    let version = client.version().await.expect("one.system.version");
    assert!(!version.is_empty());
    let templates = client.templates().await.expect("templatepool");
    let worker = templates
        .iter()
        .find(|t| t.name == "talos-healthy-worker")
        .expect("the worker template");
    let full = client.template(worker.id).await.expect("template.info");
    assert!(
        full.context
            .iter()
            .any(|(k, v)| k == "NETWORK" && v == "YES"),
        "{full:?}"
    );
    let named = client
        .template_named("talos-healthy-worker")
        .await
        .expect("by name");
    assert_eq!(named.id, worker.id);

    // The VMs of the existing nodes are RUNNING with their node's address.
    let vms = client.vms().await.expect("vmpool");
    assert_eq!(vms.len(), 5, "{vms:?}");
    let first = client.vm(vms[0].id).await.expect("vm.info");
    assert!(first.is_running(), "{first:?}");
    assert!(
        first.ip().is_some_and(|ip| ip.starts_with("127.")),
        "{first:?}"
    );

    let bad = xmlrpc(&sim, Some("wrong"));
    let err = bad.version().await.expect_err("a wrong password");
    assert_eq!(err.kind(), Some(FailureKind::Authentication), "{err}");
    assert!(!err.to_string().contains("wrong"), "{err}");

    let err = client.vm(999_999).await.expect_err("no such VM");
    assert_eq!(err.kind(), Some(FailureKind::NoSuchObject), "{err}");
    let err = client
        .template_named("nope")
        .await
        .expect_err("no such template");
    assert!(
        err.to_string().contains("no VM template named \"nope\""),
        "{err}"
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn oneflow_scale_out_follows_the_new_vm_until_joined() {
    let sim = start(scenario("healthy")).await;
    let config = sim_config(&sim);
    let provider = connect(
        "sim-oneflow",
        &config.providers["sim-oneflow"],
        &OneEnvironment::default(),
    )
    .expect("provider");
    let request = PlanRequest {
        cluster: "healthy".into(),
        role: MachineRole::Worker,
        count: 1,
        provider: Some("sim-oneflow".into()),
        name_pattern: None,
    };
    let the_plan = plan(&config, &provider, &request, &BTreeSet::new())
        .await
        .expect("plan");
    let PlanSource::ServiceRole {
        cardinality,
        target,
        service_id,
        ..
    } = the_plan.source.clone()
    else {
        panic!("a OneFlow plan: {the_plan:?}")
    };
    assert_eq!((cardinality, target), (2, 3));

    let dir = tempfile::tempdir().expect("temp");
    let dispatcher = Dispatcher::new(false, AuditLog::new(dir.path().join("audit.log")));
    let Gate::Confirm(pending) = dispatcher.request(the_plan.action()) else {
        panic!("not read-only")
    };
    let Verdict::Proceed(approved) = dispatcher.answer(pending, Answer::Typed("healthy".into()))
    else {
        panic!("the typed name confirms")
    };

    let sources = Sources {
        talosconfigs: vec![sim.fleet.talosconfig_path()],
        kubeconfigs: vec![sim.fleet.kubeconfig_path()],
        ..Default::default()
    };
    let discovery = discover(&sources);
    let cluster = discovery.cluster("healthy").expect("healthy cluster");
    let ctx = cluster.talos.clone().expect("talos context");
    let kube = KubeClient::new(
        discovery.kubeconfig.as_ref().expect("kubeconfig"),
        cluster.kube_context().expect("kube context"),
        Default::default(),
    )
    .await
    .expect("kube client");
    let checks = JoinChecks {
        talos: taloscope::talos::TalosClient::new(&ctx, fast()).expect("talos client"),
        member_node: ctx.nodes.first().cloned(),
        kube: Some(kube),
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = RunnerOptions {
        poll: Duration::from_millis(20),
        timeout: Duration::from_secs(60),
    };
    let flow = match &provider.clients {
        ProviderClients::Flow { flow, .. } => flow.clone(),
        other => panic!("a OneFlow provider: {other:?}"),
    };
    let runner = ProvisionRunner::new(the_plan, provider, checks, None, options, tx);
    let state_dir = dir.path().to_path_buf();
    let task = tokio::spawn(async move {
        let mut provisioning = Provisioning::new(runner);
        let run = Runner {
            approved: &approved,
            dispatcher: &dispatcher,
            state_dir: &state_dir,
            acks: &[],
            cancel: CancelSignal::never(),
            events: &|_| {},
        };
        let result = taloscope::operation::run(&mut provisioning, run).await;
        provisioning.summary(&result).await
    });
    let mut stages = Vec::new();
    let summary = within(90, "the scale-out", async {
        loop {
            match rx.recv().await.expect("events until Finished") {
                ProvisionEvent::Vm(p) => stages.push(p.stage),
                ProvisionEvent::Note(_) => {}
                ProvisionEvent::Finished(s) => break s,
            }
        }
    })
    .await;
    task.await.expect("runner task");
    assert!(summary.succeeded(), "{}", summary.line());
    assert_eq!(summary.vms.len(), 1);
    assert!(summary.vms[0].ip.is_some());
    assert!(
        stages.windows(2).all(|w| w[0] <= w[1]),
        "stages go forward: {stages:?}"
    );
    assert_eq!(
        stages.first(),
        Some(&ProvisionStage::Creating),
        "{stages:?}"
    );
    assert_eq!(stages.last(), Some(&ProvisionStage::Joined), "{stages:?}");
    let service = flow.service(service_id).await.expect("service");
    let role = service.role("worker").expect("worker role");
    assert_eq!(role.cardinality, 3);
    assert_eq!(role.vms.len(), 3);
    sim.fleet.shutdown().await;
}
