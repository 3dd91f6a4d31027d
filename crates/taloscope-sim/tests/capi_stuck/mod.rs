//! The `capi` scenarios' stuck faults, each shown and cleared with its fix: a rollout stuck on
//! unhealthy etcd, an orphaned etcd member, a stopped single member (and the workload's
//! Kubernetes API meanwhile: storage requests time out, discovery answers).
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_stuck_on_unhealthy_etcd_resumes_once_the_stuck_machine_is_deleted() {
    let sim = start_builtin("capi-stuck-rollout", TIME_SCALE).await;
    let home = tempfile::tempdir().expect("home");
    let stuck = wait_for("the rollout is stuck", LIMIT, || {
        let cps = control_planes(&sim);
        let cond = tcp_condition(&sim, "EtcdClusterHealthyCondition");
        async move {
            let c = cond?;
            (cps.len() == 4
                && cps.iter().all(ready)
                && c["status"] == "False"
                && c["message"].as_str()?.contains("service is not healthy"))
            .then(|| c["message"].as_str().unwrap_or_default().to_string())
        }
    })
    .await;
    assert!(stuck.contains("service is not healthy: etcd"), "{stuck}");
    let victim = stuck.split('"').nth(1).expect("machine named").to_string();
    let stuck_machine = capi(&sim)
        .get("machines", &victim)
        .expect("the stuck Machine");
    assert_eq!(
        stuck_machine["spec"]["version"], "v1.34.1",
        "an outdated Machine"
    );
    kubectl(&sim, home.path(), &["delete", "machine", &victim]);
    let mut seen = 0;
    wait_control_planes(&sim, 3, "v1.34.2", &mut seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphaned_member_blocks_etcd_health_until_it_is_removed_over_the_talos_api() {
    let sim = start_builtin("capi-orphaned-member", TIME_SCALE).await;
    let message = etcd_condition(&sim, "False").await;
    assert!(
        message.contains("expected to have 3 members, got 4"),
        "{message}"
    );
    let ctx = sim.context("capi-work");
    let names: Vec<String> = control_planes(&sim)
        .iter()
        .filter_map(|m| m["status"]["nodeRef"]["name"].as_str().map(String::from))
        .collect();
    let endpoint = ctx.endpoints[0].clone();
    let mut client = machine(&ctx, &endpoint).await;
    let members = client
        .etcd_member_list(EtcdMemberListRequest { query_local: false })
        .await
        .expect("member list")
        .into_inner();
    let orphan = members.messages[0]
        .members
        .iter()
        .find(|m| !names.contains(&m.hostname))
        .expect("an orphaned member")
        .clone();
    let host = endpoint.split(':').next().expect("address").to_string();
    client
        .etcd_remove_member_by_id(with_meta(
            EtcdRemoveMemberByIdRequest {
                member_id: orphan.id,
            },
            "node",
            &host,
        ))
        .await
        .expect("removed");
    etcd_condition(&sim, "True").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_single_member_answers_as_upstream_and_a_reboot_starts_it_again() {
    let sim = start_builtin("capi-etcd-stopped", TIME_SCALE).await;
    let message = etcd_condition(&sim, "False").await;
    assert!(
        message.contains(
            "service \"etcd\" not in expected state \"Running\": current state [Finished] Service finished successfully"
        ),
        "{message}"
    );
    assert_eq!(control_planes(&sim).len(), 1);
    assert!(!etcd_healthy(&sim));
    let ctx = sim.context("capi-work");
    let node = control_planes(&sim)[0]["status"]["nodeRef"]["name"]
        .as_str()
        .expect("nodeRef")
        .to_string();
    let endpoint = ctx.endpoints[0].clone();
    let host = endpoint.split(':').next().expect("address").to_string();
    let mut client = machine(&ctx, &endpoint).await;

    // ServiceList: etcd Finished, not healthy; the node still answers.
    let services = client
        .service_list(with_meta((), "node", &host))
        .await
        .expect("service list")
        .into_inner();
    let etcd = services.messages[0]
        .services
        .iter()
        .find(|s| s.id == "etcd")
        .expect("etcd listed")
        .clone();
    assert_eq!(etcd.state, "Finished");
    let health = etcd.health.expect("health");
    assert!(!health.healthy && !health.unknown, "{health:?}");
    assert_eq!(health.last_message, "service not running");

    // The etcd calls wait on the local client until their deadline.
    let status = client
        .etcd_status(with_meta((), "node", &host))
        .await
        .expect_err("etcd status fails");
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
    assert_eq!(
        status.message(),
        "failed to query etcd status: context deadline exceeded"
    );
    let list = client
        .etcd_member_list(with_meta(
            EtcdMemberListRequest { query_local: false },
            "node",
            &host,
        ))
        .await
        .expect_err("member list fails");
    assert_eq!(list.code(), tonic::Code::DeadlineExceeded, "{list:?}");

    // ServiceRestart of a stopped service is a start, which etcd refuses through the API.
    let refused = client
        .service_restart(with_meta(
            ServiceRestartRequest { id: "etcd".into() },
            "node",
            &host,
        ))
        .await
        .expect_err("etcd is not started through the API");
    assert_eq!(
        refused.message(),
        "service \"etcd\" doesn't support start operation via API"
    );

    // A reboot starts it again: the data is intact, the member answers as leader.
    client
        .reboot(with_meta(RebootRequest::default(), "node", &host))
        .await
        .expect("reboot accepted");
    etcd_condition(&sim, "True").await;
    assert!(etcd_healthy(&sim));
    let mut client = machine(&ctx, &endpoint).await;
    let answer = client
        .etcd_status(with_meta((), "node", &host))
        .await
        .expect("etcd answers again")
        .into_inner();
    let member = answer.messages[0].member_status.clone().expect("status");
    assert_eq!(member.leader, member.member_id, "{node} leads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_its_only_etcd_stopped_the_workload_api_times_out_on_storage_until_etcd_runs() {
    let sim = start_builtin("capi-etcd-stopped", TIME_SCALE).await;
    etcd_condition(&sim, "False").await;
    let home = tempfile::tempdir().expect("temp home");
    let work = "admin@capi-work";
    let node = control_planes(&sim)[0]["status"]["nodeRef"]["name"]
        .as_str()
        .expect("nodeRef")
        .to_string();
    // Every read and write of storage: 504 Timeout once the request's deadline passed.
    for args in [
        &["get", "nodes"][..],
        &["get", "node", &node],
        &["get", "leases", "-n", "kube-system"],
        &["get", "pods", "-A"],
        &["cordon", &node],
    ] {
        let out = kubectl_at(&sim, home.path(), work, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{args:?} answered while etcd is stopped"
        );
        assert!(
            stderr.contains("Timeout: request did not complete within requested timeout"),
            "{args:?}: {stderr}"
        );
    }
    // Discovery is served from memory; the health endpoints fail their etcd checks.
    for path in ["/api", "/version"] {
        let out = kubectl_at(&sim, home.path(), work, &["get", "--raw", path]);
        assert!(out.status.success(), "{path}: {out:?}");
    }
    for endpoint in ["/livez", "/readyz?verbose"] {
        let out = kubectl_at(&sim, home.path(), work, &["get", "--raw", endpoint]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("[-]etcd failed: reason withheld"),
            "{endpoint}: {stderr}"
        );
    }
    // The management cluster's own API is not that cluster's: it answers.
    assert!(!kubectl(&sim, home.path(), &["get", "machines"]).is_empty());

    // etcd runs again (as after the doctor's reboot): the API answers again.
    sim.fleet
        .state()
        .set_etcd_stopped("capi-work", &node, false)
        .expect("the node");
    wait_for("the workload API back", LIMIT, || {
        let out = kubectl_at(&sim, home.path(), work, &["get", "nodes"]);
        async move { out.status.success().then_some(()) }
    })
    .await;
    let livez = kubectl_at(&sim, home.path(), work, &["get", "--raw", "/livez"]);
    assert_eq!(String::from_utf8_lossy(&livez.stdout), "ok");
}
