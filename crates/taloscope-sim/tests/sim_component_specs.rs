//! The Kubernetes component specs Talos renders, per version: a scenario's `extra_args` land in
//! the machine config, the `StaticPods` and `KubeletSpecs` resources (namespace `k8s`, readable
//! by os:reader) show them as flags, and an applied config that changes only a component's
//! `extraArgs` bumps its `<Component>Configs` version and restarts its static pod, whose
//! `talos.dev/config-version` then catches up.
mod sim_common;

use std::time::Duration;

use serde_json::Value;
use sim_common::{channel, document_of, machine, scenario_from_yaml, start, wait_for, with_meta};
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::cosi::resource::{GetRequest, Resource};
use taloscope_proto::machine::{ApplyConfigurationRequest, apply_configuration_request};
use taloscope_sim::Scenario;

const LIMIT: Duration = Duration::from_secs(20);
const CP1: &str = "127.10.0.1";
const W1: &str = "127.10.0.2";

fn scenario(talos: &str, kube: &str) -> Scenario {
    let text = format!(
        "clusters:\n  - name: c\n    talos_version: {talos}\n    kubernetes_version: {kube}\n    extra_args:\n      kube-apiserver:\n        cloud-config: /etc/kubernetes/cloud.conf\n        feature-gates: AppArmor=true\n      kubelet:\n        cloud-config: /etc/kubernetes/cloud.conf\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n"
    );
    scenario_from_yaml("c", &text)
}

async fn get(
    state: &mut StateClient<tonic::transport::Channel>,
    node: &str,
    (namespace, kind, id): (&str, &str, &str),
) -> Result<Resource, tonic::Status> {
    let req = GetRequest {
        namespace: namespace.into(),
        r#type: kind.into(),
        id: id.into(),
        options: None,
    };
    let r = state.get(with_meta(req, "node", node)).await?;
    Ok(r.into_inner().resource.expect("resource"))
}

const APISERVER_CONFIG: (&str, &str, &str) = (
    "controlplane",
    "APIServerConfigs.kubernetes.talos.dev",
    "kube-apiserver",
);
const APISERVER_POD: (&str, &str, &str) =
    ("k8s", "StaticPods.kubernetes.talos.dev", "kube-apiserver");
const KUBELET_SPEC: (&str, &str, &str) = ("k8s", "KubeletSpecs.kubernetes.talos.dev", "kubelet");

fn spec(r: &Resource) -> Value {
    serde_saphyr::from_str(&r.spec.as_ref().expect("spec").yaml_spec).expect("yaml spec")
}

fn version(r: &Resource) -> String {
    r.metadata.as_ref().expect("metadata").version.clone()
}

fn has(list: &Value, arg: &str) -> bool {
    list.as_array()
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(arg)))
}

#[tokio::test]
async fn extra_args_render_as_flags_and_a_change_bumps_the_config_version() {
    for (talos, kube) in [
        ("v1.10.7", "v1.32.3"),
        ("v1.11.3", "v1.34.1"),
        ("v1.12.0", "v1.35.0"),
        ("v1.13.0", "v1.35.0"),
    ] {
        let sim = start(scenario(talos, kube), 50.0).await;
        let ctx = sim.context("c");
        let mut state = StateClient::new(channel(&ctx, &ctx.endpoints[0]).await.unwrap());

        let pod = spec(&get(&mut state, CP1, APISERVER_POD).await.expect("pod"));
        let command = &pod["spec"]["containers"][0]["command"];
        assert_eq!(command[0], "/usr/local/bin/kube-apiserver", "{talos}");
        assert!(
            has(command, "--cloud-config=/etc/kubernetes/cloud.conf"),
            "{talos}: {command}"
        );
        assert!(has(command, "--feature-gates=AppArmor=true"), "{talos}");
        assert_eq!(
            pod["metadata"]["annotations"]["talos.dev/config-version"],
            "1"
        );
        let kubelet = spec(&get(&mut state, W1, KUBELET_SPEC).await.expect("kubelet"));
        assert!(
            has(
                &kubelet["args"],
                "--cloud-config=/etc/kubernetes/cloud.conf"
            ),
            "{talos}: {kubelet}"
        );
        assert!(
            kubelet["image"]
                .as_str()
                .is_some_and(|i| i.ends_with(&format!(":{kube}"))),
            "{kubelet}"
        );
        // Not sensitive: os:reader reads them; workers render no static pod.
        let reader = sim.context("c-reader");
        let mut read_only = StateClient::new(channel(&reader, &reader.endpoints[0]).await.unwrap());
        assert!(get(&mut read_only, CP1, APISERVER_POD).await.is_ok());
        let none = get(&mut state, W1, APISERVER_POD)
            .await
            .expect_err("worker");
        assert_eq!(none.code(), tonic::Code::NotFound, "{talos}");

        // Only the extraArgs change: the component config is rewritten all the same.
        let config_before = get(&mut state, CP1, APISERVER_CONFIG).await.expect("cfg");
        assert_eq!(version(&config_before), "1");
        let mc = get(
            &mut state,
            CP1,
            ("config", "MachineConfigs.config.talos.dev", "v1alpha1"),
        )
        .await
        .expect("machine config");
        let text = document_of(&mc.spec.expect("spec").proto_spec);
        let changed = text.replace("      feature-gates: \"AppArmor=true\"\n", "");
        assert_ne!(changed, text, "{talos}: {text}");
        let mut client = machine(&ctx, &ctx.endpoints[0]).await;
        let req = ApplyConfigurationRequest {
            data: changed.into_bytes(),
            mode: apply_configuration_request::Mode::NoReboot as i32,
            ..ApplyConfigurationRequest::default()
        };
        client
            .apply_configuration(with_meta(req, "node", CP1))
            .await
            .expect("applied");
        let after = get(&mut state, CP1, APISERVER_CONFIG).await.expect("cfg");
        assert_eq!(version(&after), "2", "{talos}");
        let pod = wait_for("the static pod re-rendered without the gate", LIMIT, || {
            let mut state = state.clone();
            async move {
                let pod = spec(&get(&mut state, CP1, APISERVER_POD).await.ok()?);
                (pod["metadata"]["annotations"]["talos.dev/config-version"] == "2").then_some(pod)
            }
        })
        .await;
        let command = &pod["spec"]["containers"][0]["command"];
        assert!(!has(command, "--feature-gates=AppArmor=true"), "{command}");
        assert!(has(command, "--cloud-config=/etc/kubernetes/cloud.conf"));
        sim.fleet.shutdown().await;
    }
}

#[test]
fn extra_args_for_an_unknown_component_are_refused_by_name() {
    let text = "clusters:\n  - name: c\n    extra_args:\n      kube-proxy: {v: '2'}\n    nodes:\n      - name: cp-1\n        role: controlplane\n";
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("c.yaml");
    std::fs::write(&path, text).expect("write");
    let err = Scenario::from_file(&path).expect_err("refused").to_string();
    assert!(
        err.contains("kube-proxy") && err.contains("extra_args"),
        "{err}"
    );
}
