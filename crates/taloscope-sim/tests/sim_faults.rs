//! Faults over loopback mutual TLS: a down node (Unavailable one-to-one, an error entry under
//! `nodes`), the reader's refusals, the legacy Upgrade's etcd check with upstream's wording,
//! the NOSPACE alarm, and server certificates from the wrong CA or expired.
mod sim_common;

use std::time::Duration;

use sim_common::{
    channel, document_of, machine, scenario_from_yaml, start, start_builtin, with_meta,
};
use taloscope_proto::cosi::resource::GetRequest;
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::machine::{
    ApplyConfigurationRequest, EtcdForfeitLeadershipRequest, RebootRequest, UpgradeRequest,
    etcd_member_alarm,
};
use tonic::Code;

fn upgrade_to(tag: &str) -> UpgradeRequest {
    UpgradeRequest {
        image: format!("ghcr.io/siderolabs/installer:{tag}"),
        ..UpgradeRequest::default()
    }
}

#[tokio::test]
async fn down_node_is_unavailable_and_an_error_entry_under_nodes() {
    let sim = start_builtin("cp2-down", 100.0).await;
    let ctx = sim.context("cp2-down");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let err = client
        .version(with_meta((), "node", "127.10.0.2"))
        .await
        .expect_err("cp-2 is down");
    assert_eq!(err.code(), Code::Unavailable);
    let all = ctx.nodes.join(",");
    let merged = client
        .version(with_meta((), "nodes", &all))
        .await
        .expect("one-to-many succeeds overall")
        .into_inner();
    assert_eq!(merged.messages.len(), 5);
    for (m, ip) in merged.messages.iter().zip(&ctx.nodes) {
        let meta = m.metadata.as_ref().expect("metadata");
        assert_eq!(&meta.hostname, ip);
        if ip == "127.10.0.2" {
            assert!(m.version.is_none());
            assert!(meta.error.contains("connection refused"), "{}", meta.error);
            assert_eq!(
                meta.status.as_ref().expect("status").code,
                Code::Unavailable as i32
            );
        } else {
            assert!(meta.error.is_empty());
            assert_eq!(m.version.as_ref().expect("version").tag, "v1.11.3");
        }
    }
    // The listener itself is gone: dialing cp-2 directly fails.
    let direct = sim_common::channel(&ctx, &ctx.endpoints[1]).await;
    assert!(direct.is_err(), "cp-2's apid must refuse connections");
    // Its etcd member is unhealthy, so the legacy upgrade of a control plane is refused.
    let refused = client
        .upgrade(with_meta(upgrade_to("v1.11.5"), "node", "127.10.0.3"))
        .await
        .expect_err("etcd check");
    assert!(
        refused
            .message()
            .starts_with("error validating etcd for upgrade: etcd member ")
            && refused
                .message()
                .contains("is not healthy; all members must be healthy to perform an upgrade"),
        "{}",
        refused.message()
    );
    // Only force skips the check: preserve does not (v1alpha1_server.go, `Upgrade`).
    let preserved = client
        .upgrade(with_meta(
            UpgradeRequest {
                preserve: true,
                ..upgrade_to("v1.11.5")
            },
            "node",
            "127.10.0.3",
        ))
        .await
        .expect_err("etcd check with preserve too");
    assert!(
        preserved
            .message()
            .starts_with("error validating etcd for upgrade: etcd member "),
        "{}",
        preserved.message()
    );
    // Workers skip the check; force skips it too (here on a worker to keep the cluster intact).
    let ok = client
        .upgrade(with_meta(upgrade_to("v1.11.5"), "node", "127.10.0.4"))
        .await
        .expect("worker upgrade accepted")
        .into_inner();
    assert_eq!(ok.messages[0].ack, "Upgrade request received");
    assert!(!ok.messages[0].actor_id.is_empty());
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn two_member_etcd_is_refused_with_upstream_wording() {
    let text = "clusters:\n  - name: duo\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n";
    let sim = start(scenario_from_yaml("duo", text), 100.0).await;
    let ctx = sim.context("duo");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let err = client
        .upgrade(upgrade_to("v1.11.5"))
        .await
        .expect_err("two members");
    assert_eq!(
        err.message(),
        "error validating etcd for upgrade: etcd member count(2) is insufficient to maintain quorum if upgrade commences"
    );
    sim.fleet.shutdown().await;
}

/// The legacy Upgrade validates etcd on a control plane whenever `force` is false, `preserve`
/// or not (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go).
#[tokio::test]
async fn preserve_does_not_skip_the_etcd_check_and_force_does() {
    let text = "clusters:\n  - name: duo\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n";
    let sim = start(scenario_from_yaml("duo", text), 100.0).await;
    let ctx = sim.context("duo");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let preserved = UpgradeRequest {
        preserve: true,
        ..upgrade_to("v1.11.5")
    };
    let err = client.upgrade(preserved).await.expect_err("preserve");
    assert!(err.message().contains("error validating etcd"), "{err:?}");
    let forced = UpgradeRequest {
        force: true,
        ..upgrade_to("v1.11.5")
    };
    client.upgrade(forced).await.expect("force skips the check");
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn reader_is_refused_mutations() {
    let sim = start_builtin("healthy", 100.0).await;
    let ctx = sim.context("healthy-reader");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let upgrade = client
        .upgrade(upgrade_to("v1.11.5"))
        .await
        .expect_err("reader");
    assert_eq!(upgrade.code(), Code::PermissionDenied);
    assert_eq!(upgrade.message(), "not authorized");
    let reboot = client
        .reboot(with_meta(RebootRequest::default(), "node", "127.10.0.4"))
        .await
        .expect_err("reader");
    assert_eq!(reboot.code(), Code::PermissionDenied);
    let apply = client
        .apply_configuration(ApplyConfigurationRequest {
            data: b"version: v1alpha1".to_vec(),
            mode: 2,
            ..ApplyConfigurationRequest::default()
        })
        .await
        .expect_err("reader");
    assert_eq!(apply.code(), Code::PermissionDenied);
    let forfeit = client
        .etcd_forfeit_leadership(EtcdForfeitLeadershipRequest {})
        .await
        .expect_err("reader");
    assert_eq!(forfeit.code(), Code::PermissionDenied);
    // Reads still work, and nothing rebooted.
    assert!(client.version(()).await.is_ok());
    let state = sim.fleet.state();
    let node = &state.clusters()[0].nodes()[3];
    assert!(node.status().ready && node.status().boot == 1);
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn admin_applies_config_and_forfeits_leadership() {
    let sim = start_builtin("healthy", 100.0).await;
    let ctx = sim.context("healthy");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    // The endpoint's own running config, applied again (a bare `version: v1alpha1` fails the
    // node's validation).
    let channel = channel(&ctx, &ctx.endpoints[0]).await.expect("connects");
    let running = StateClient::new(channel)
        .get(GetRequest {
            namespace: "config".into(),
            r#type: "MachineConfigs.config.talos.dev".into(),
            id: "v1alpha1".into(),
            options: None,
        })
        .await
        .expect("machine config")
        .into_inner()
        .resource
        .and_then(|r| r.spec)
        .expect("spec");
    let applied = client
        .apply_configuration(ApplyConfigurationRequest {
            data: document_of(&running.proto_spec).into_bytes(),
            mode: 2,
            ..ApplyConfigurationRequest::default()
        })
        .await
        .expect("apply")
        .into_inner();
    assert_eq!(applied.messages[0].mode, 2);
    let forfeit = client
        .etcd_forfeit_leadership(EtcdForfeitLeadershipRequest {})
        .await
        .expect("forfeit")
        .into_inner();
    assert_eq!(forfeit.messages[0].member, "cp-2");
    let etcd = sim.fleet.state().clusters()[0].etcd();
    assert_eq!(etcd.leader, Some(1));
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn nospace_alarm_is_listed_on_every_control_plane() {
    let sim = start_builtin("alarm", 100.0).await;
    let ctx = sim.context("alarm-reader");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let alarms = client
        .etcd_alarm_list(with_meta((), "nodes", "127.10.0.1,127.10.0.2"))
        .await
        .expect("alarms")
        .into_inner();
    let cp3 = sim.fleet.state().clusters()[0].nodes()[2].etcd_member_id();
    for m in &alarms.messages {
        assert_eq!(m.member_alarms.len(), 1);
        assert_eq!(m.member_alarms[0].member_id, cp3);
        assert_eq!(
            m.member_alarms[0].alarm,
            etcd_member_alarm::AlarmType::Nospace as i32
        );
    }
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn wrong_ca_and_expired_server_certificates_are_rejected() {
    let text = "clusters:\n  - name: certs\n    expired_client_context: true\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: cp-2\n        role: controlplane\n        faults:\n          wrong_ca_cert: true\n      - name: cp-3\n        role: controlplane\n        faults:\n          expired_cert: true\n";
    let sim = start(scenario_from_yaml("certs", text), 100.0).await;
    let ctx = sim.context("certs");
    for endpoint in &ctx.endpoints[1..] {
        let result = match sim_common::channel(&ctx, endpoint).await {
            Err(e) => Err(e.to_string()),
            Ok(ch) => {
                let mut c =
                    taloscope_proto::machine::machine_service_client::MachineServiceClient::new(ch);
                tokio::time::timeout(Duration::from_secs(5), c.version(()))
                    .await
                    .expect("bounded")
                    .map(|_| ())
                    .map_err(|s| s.to_string())
            }
        };
        assert!(result.is_err(), "{endpoint} must be rejected");
    }
    // The good node still answers, and the expired client context is refused by it.
    let mut good = machine(&ctx, &ctx.endpoints[0]).await;
    assert!(good.version(()).await.is_ok());
    let expired = sim.context("certs-expired");
    let refused = match sim_common::channel(&expired, &expired.endpoints[0]).await {
        Err(_) => true,
        Ok(ch) => {
            let mut c =
                taloscope_proto::machine::machine_service_client::MachineServiceClient::new(ch);
            tokio::time::timeout(Duration::from_secs(5), c.version(()))
                .await
                .expect("bounded")
                .is_err()
        }
    };
    assert!(refused, "an expired client certificate must be refused");
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn slow_node_answers_late() {
    let text = "clusters:\n  - name: slow\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n        faults:\n          slow_ms: 300\n";
    let sim = start(scenario_from_yaml("slow", text), 100.0).await;
    let ctx = sim.context("slow");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let started = std::time::Instant::now();
    client
        .version(with_meta((), "node", "127.10.0.2"))
        .await
        .expect("slow but answers");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let mut quick = tonic::Request::new(());
    quick.set_timeout(Duration::from_millis(100));
    quick
        .metadata_mut()
        .insert("node", "127.10.0.2".parse().expect("ascii"));
    let late = client.version(quick).await.expect_err("deadline");
    assert!(
        matches!(late.code(), Code::Cancelled | Code::DeadlineExceeded),
        "{late:?}"
    );
    sim.fleet.shutdown().await;
}
