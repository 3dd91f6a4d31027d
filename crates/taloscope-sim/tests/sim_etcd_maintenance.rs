//! The etcd maintenance calls as the sim serves them: the role rules of upstream's machined.go
//! (disarm and defragment for operators, removal for admins, snapshots also for
//! os:etcd:backup), control planes only, the snapshot stream ending in the SHA-256 of the
//! database, defragment shrinking the member's file, and removal of an unknown id NotFound.
mod sim_common;

use base64::Engine as _;
use sim_common::*;
use taloscope_proto::machine::{EtcdRemoveMemberByIdRequest, EtcdSnapshotRequest};
use tonic::Code;

fn with_roles(sim: &Sim, roles: &[&str]) -> Context {
    let (crt, key) = sim.fleet.client_cert(roles).expect("client cert");
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    Context {
        crt: b64(&crt),
        key: b64(&key),
        ..sim.context("healthy")
    }
}

async fn snapshot_bytes(ctx: &Context, endpoint: &str, node: &str) -> Result<Vec<u8>, Code> {
    let mut client = machine(ctx, endpoint).await;
    let mut stream = client
        .etcd_snapshot(with_meta(EtcdSnapshotRequest {}, "node", node))
        .await
        .map_err(|s| s.code())?
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.message().await.map_err(|s| s.code())? {
        bytes.extend_from_slice(&chunk.bytes);
    }
    Ok(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_role_gets_the_etcd_calls_machined_gives_it() {
    let sim = start_builtin("healthy", 50.0).await;
    let admin = sim.context("healthy");
    let endpoint = admin.endpoints[0].clone();
    let cp1 = admin.nodes[0].clone();
    let operator = with_roles(&sim, &["os:operator"]);
    let backup = with_roles(&sim, &["os:etcd:backup"]);
    let reader = sim.context("healthy-reader");

    let mut op = machine(&operator, &endpoint).await;
    op.etcd_defragment(with_meta((), "node", &cp1))
        .await
        .expect("operators defragment");
    op.etcd_alarm_disarm(with_meta((), "node", &cp1))
        .await
        .expect("operators disarm");
    let removal = op
        .etcd_remove_member_by_id(with_meta(
            EtcdRemoveMemberByIdRequest { member_id: 1 },
            "node",
            &cp1,
        ))
        .await
        .expect_err("only admins remove members");
    assert_eq!(removal.code(), Code::PermissionDenied);

    assert!(snapshot_bytes(&operator, &endpoint, &cp1).await.is_ok());
    let from_backup = snapshot_bytes(&backup, &endpoint, &cp1)
        .await
        .expect("os:etcd:backup");
    assert_eq!(
        snapshot_bytes(&reader, &endpoint, &cp1).await,
        Err(Code::PermissionDenied)
    );
    let mut bk = machine(&backup, &endpoint).await;
    let denied = bk
        .etcd_defragment(with_meta((), "node", &cp1))
        .await
        .expect_err("os:etcd:backup only reads");
    assert_eq!(denied.code(), Code::PermissionDenied);
    // It reads what a backup needs to know (machined.go `rules`, v1.10.7 to v1.13).
    bk.etcd_member_list(with_meta(Default::default(), "node", &cp1))
        .await
        .expect("os:etcd:backup lists members");
    bk.etcd_status(with_meta((), "node", &cp1))
        .await
        .expect("os:etcd:backup reads the status");
    bk.etcd_alarm_list(with_meta((), "node", &cp1))
        .await
        .expect("os:etcd:backup lists alarms");
    let services = bk
        .service_list(with_meta((), "node", &cp1))
        .await
        .expect_err("os:etcd:backup reads nothing else");
    assert_eq!(services.code(), Code::PermissionDenied);

    let (db, hash) = from_backup.split_at(from_backup.len() - 32);
    assert_eq!(
        hash,
        ring::digest::digest(&ring::digest::SHA256, db).as_ref()
    );
    assert_eq!(db.len() % 4096, 0, "whole bbolt pages");
    assert_eq!(
        snapshot_bytes(&admin, &endpoint, &cp1)
            .await
            .expect("again"),
        from_backup,
        "the same database streams the same"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defragment_shrinks_the_member_and_workers_and_unknown_members_are_refused() {
    let sim = start_builtin("healthy", 50.0).await;
    let admin = sim.context("healthy");
    let endpoint = admin.endpoints[0].clone();
    let cp2 = admin.nodes[1].clone();
    let worker = admin.nodes[3].clone();
    let mut client = machine(&admin, &endpoint).await;
    let status = |resp: tonic::Response<taloscope_proto::machine::EtcdStatusResponse>| {
        let s = resp
            .into_inner()
            .messages
            .remove(0)
            .member_status
            .expect("status");
        (s.db_size, s.db_size_in_use)
    };
    let before = status(
        client
            .etcd_status(with_meta((), "node", &cp2))
            .await
            .expect("status"),
    );
    assert!(before.0 > before.1, "free pages before: {before:?}");
    client
        .etcd_defragment(with_meta((), "node", &cp2))
        .await
        .expect("defragment");
    let after = status(
        client
            .etcd_status(with_meta((), "node", &cp2))
            .await
            .expect("status"),
    );
    assert_eq!(after, (before.1, before.1));

    let on_worker = client
        .etcd_defragment(with_meta((), "node", &worker))
        .await
        .expect_err("workers run no etcd");
    assert_eq!(on_worker.code(), Code::Unimplemented);
    let unknown = client
        .etcd_remove_member_by_id(with_meta(
            EtcdRemoveMemberByIdRequest { member_id: 42 },
            "node",
            &cp2,
        ))
        .await
        .expect_err("no such member");
    assert_eq!(unknown.code(), Code::NotFound);
    assert_eq!(unknown.message(), "etcdserver: member not found");
}
