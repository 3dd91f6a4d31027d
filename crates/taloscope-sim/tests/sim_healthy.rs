//! The `healthy` scenario over loopback mutual TLS: every node answers Version/Hostname/
//! ServiceList through one endpoint with `node` metadata, etcd looks healthy, COSI reads work,
//! and the talosconfig has the admin and reader contexts with private permissions.
mod sim_common;

use std::os::unix::fs::PermissionsExt;

use sim_common::{machine, start_builtin, with_meta};
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::cosi::resource::{GetRequest, WatchRequest};
use taloscope_proto::machine::EtcdMemberListRequest;
use tokio_stream::StreamExt;
use tonic::Code;

#[tokio::test]
async fn version_hostname_and_services_on_every_node_through_one_endpoint() {
    let sim = start_builtin("healthy", 100.0).await;
    assert_eq!(sim.config.context, "healthy");
    let ctx = sim.context("healthy");
    assert_eq!(ctx.endpoints.len(), 3);
    assert_eq!(ctx.nodes.len(), 5);
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let names = ["cp-1", "cp-2", "cp-3", "w-1", "w-2"];
    for (ip, name) in ctx.nodes.iter().zip(names) {
        let v = client
            .version(with_meta((), "node", ip))
            .await
            .expect("version")
            .into_inner();
        assert_eq!(v.messages.len(), 1);
        let m = &v.messages[0];
        assert_eq!(m.version.as_ref().expect("version info").tag, "v1.11.3");
        assert!(m.features.as_ref().expect("features").rbac);
        assert!(m.metadata.is_none(), "one-to-one replies carry no metadata");
        let h = client
            .hostname(with_meta((), "node", ip))
            .await
            .expect("hostname")
            .into_inner();
        assert_eq!(h.messages[0].hostname, name);
        // apid dials `node` as given: a hostname needs DNS, which knows no sim node.
        let by_name = client
            .service_list(with_meta((), "node", name))
            .await
            .expect_err("no DNS for sim hostnames");
        assert_eq!(by_name.code(), tonic::Code::Unavailable);
        assert!(by_name.message().contains("no such host"), "{by_name:?}");
        let services = client
            .service_list(with_meta((), "node", ip))
            .await
            .expect("services by address")
            .into_inner();
        let ids: Vec<_> = services.messages[0]
            .services
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(
            ids.contains(&"etcd"),
            name.starts_with("cp"),
            "{name}: {ids:?}"
        );
        assert!(ids.contains(&"kubelet") && ids.contains(&"apid"));
        assert!(
            services.messages[0]
                .services
                .iter()
                .all(|s| s.health.as_ref().is_some_and(|h| h.healthy))
        );
    }
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn etcd_has_three_healthy_members_and_one_leader() {
    let sim = start_builtin("healthy", 100.0).await;
    let ctx = sim.context("healthy-reader");
    let mut client = machine(&ctx, &ctx.endpoints[1]).await;
    let members = client
        .etcd_member_list(EtcdMemberListRequest { query_local: false })
        .await
        .expect("member list")
        .into_inner();
    let list = &members.messages[0].members;
    assert_eq!(list.len(), 3);
    let cp1 = list
        .iter()
        .find(|m| m.hostname == "cp-1")
        .expect("cp-1 member")
        .id;
    for ip in &ctx.nodes[..3] {
        let status = client
            .etcd_status(with_meta((), "node", ip))
            .await
            .expect("etcd status")
            .into_inner();
        let s = status.messages[0].member_status.as_ref().expect("status");
        assert_eq!(s.leader, cp1);
        assert!(s.errors.is_empty());
        assert!(s.raft_term > 0 && s.db_size > 0);
    }
    let alarms = client
        .etcd_alarm_list(())
        .await
        .expect("alarms")
        .into_inner();
    assert!(alarms.messages[0].member_alarms.is_empty());
    let worker = client
        .etcd_status(with_meta((), "node", &ctx.nodes[3]))
        .await
        .expect_err("workers have no etcd");
    assert_eq!(worker.code(), Code::Unimplemented);
    assert!(
        worker
            .message()
            .contains("only available on control plane nodes")
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn talosconfig_has_admin_and_reader_contexts_owner_only() {
    let sim = start_builtin("healthy", 100.0).await;
    let mode = std::fs::metadata(sim.fleet.talosconfig_path())
        .expect("talosconfig")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let names: Vec<_> = sim.config.contexts.keys().cloned().collect();
    // healthy also has a context whose certificate ends in 10 days (for `taloscope certs`).
    assert_eq!(names, ["healthy", "healthy-expiring", "healthy-reader"]);
    let raw = sim.context("healthy");
    let key = String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &raw.key)
            .expect("base64"),
    )
    .expect("utf8");
    assert!(key.starts_with("-----BEGIN ED25519 PRIVATE KEY-----"));
    assert!(raw.endpoints.iter().all(|e| e.starts_with("127.10.0.")));
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn metadata_routing_rules_follow_apid() {
    let sim = start_builtin("healthy", 100.0).await;
    let ctx = sim.context("healthy");
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let mut req = tonic::Request::new(());
    req.metadata_mut()
        .append("node", "127.10.0.1".parse().expect("ascii"));
    req.metadata_mut()
        .append("node", "127.10.0.2".parse().expect("ascii"));
    let err = client.version(req).await.expect_err("two node values");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "node metadata must be single-valued");
    // Neither key: the endpoint answers as itself.
    let own = client.hostname(()).await.expect("hostname").into_inner();
    assert_eq!(own.messages[0].hostname, "cp-1");
    // `nodes`: one-to-many with hostname metadata on each reply.
    let many = client
        .hostname(with_meta((), "nodes", "127.10.0.4,127.10.0.5"))
        .await
        .expect("fan-out")
        .into_inner();
    let got: Vec<_> = many
        .messages
        .iter()
        .map(|m| {
            (
                m.metadata.as_ref().expect("metadata").hostname.clone(),
                m.hostname.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("127.10.0.4".to_string(), "w-1".to_string()),
            ("127.10.0.5".to_string(), "w-2".to_string())
        ]
    );
    sim.fleet.shutdown().await;
}

#[tokio::test]
async fn cosi_reads_machine_status_version_and_members() {
    let sim = start_builtin("healthy", 100.0).await;
    let ctx = sim.context("healthy-reader");
    let channel = sim_common::channel(&ctx, &ctx.endpoints[0])
        .await
        .expect("channel");
    let mut state = StateClient::new(channel);
    let get = |ns: &str, ty: &str, id: &str| GetRequest {
        namespace: ns.into(),
        r#type: ty.into(),
        id: id.into(),
        options: None,
    };
    let status = state
        .get(with_meta(
            get("runtime", "MachineStatuses.runtime.talos.dev", "machine"),
            "node",
            "127.10.0.4",
        ))
        .await
        .expect("machine status")
        .into_inner();
    let yaml = &status
        .resource
        .expect("resource")
        .spec
        .expect("spec")
        .yaml_spec;
    assert_eq!(
        yaml,
        "stage: running\nstatus:\n  ready: true\n  unmetConditions: []\n"
    );
    let version = state
        .get(get("runtime", "Versions.runtime.talos.dev", "version"))
        .await
        .expect("version")
        .into_inner();
    let yaml = version
        .resource
        .expect("resource")
        .spec
        .expect("spec")
        .yaml_spec;
    assert!(yaml.contains("version: v1.11.3"), "{yaml}");
    let mut members = state
        .list(taloscope_proto::cosi::resource::ListRequest {
            namespace: "cluster".into(),
            r#type: "Members.cluster.talos.dev".into(),
            options: None,
        })
        .await
        .expect("members")
        .into_inner();
    let mut count = 0;
    while let Some(item) = members.next().await {
        let r = item.expect("member").resource.expect("resource");
        assert!(r.spec.expect("spec").yaml_spec.contains("machineType: "));
        count += 1;
    }
    assert_eq!(count, 5);
    let unknown = state
        .get(get("runtime", "Secrets.talos.dev", "x"))
        .await
        .expect_err("unsupported type");
    assert_eq!(unknown.code(), Code::PermissionDenied);
    assert_eq!(
        unknown.message(),
        "resource type \"Secrets.talos.dev\" is not supported"
    );
    let many = state
        .get(with_meta(
            get("runtime", "MachineStatuses.runtime.talos.dev", "machine"),
            "nodes",
            "127.10.0.1,127.10.0.2",
        ))
        .await
        .expect_err("one-to-many COSI");
    assert_eq!(many.code(), Code::InvalidArgument);
    assert!(
        many.message()
            .starts_with("one-2-many proxying is not supported for method")
    );
    // Watch: an empty response first, then the current resource.
    let mut watch = state
        .watch(WatchRequest {
            namespace: "runtime".into(),
            r#type: "MachineStatuses.runtime.talos.dev".into(),
            id: Some("machine".into()),
            options: None,
            api_version: 1,
        })
        .await
        .expect("watch")
        .into_inner();
    let first = tokio::time::timeout(std::time::Duration::from_secs(5), watch.next())
        .await
        .expect("first watch message in time")
        .expect("stream open")
        .expect("ok");
    assert!(first.event.is_empty());
    let second = tokio::time::timeout(std::time::Duration::from_secs(5), watch.next())
        .await
        .expect("second watch message in time")
        .expect("stream open")
        .expect("ok");
    assert_eq!(second.event.len(), 1);
    sim.fleet.shutdown().await;
}
