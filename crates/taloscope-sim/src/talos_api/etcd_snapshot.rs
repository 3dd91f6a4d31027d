//! `MachineService.EtcdSnapshot` as a simulated control plane streams it: the member's bbolt
//! database file, as large as EtcdStatus says it is, followed by its SHA-256 as etcd appends
//! it, in chunks made as the caller reads them (a NOSPACE member's file is over 2 GiB).
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status};

use super::apid::{Role, Route, Target, holds_etcd_backup, require, route, slow_down};
use super::machine::record;
use super::machine_etcd::db_sizes;
use crate::model::core::Core;
use crate::model::scenario::NodeRole;
use taloscope_proto::common::Data;
use taloscope_proto::machine::EtcdSnapshotRequest;

pub(crate) type SnapshotStream = ReceiverStream<Result<Data, Status>>;

/// bbolt's page size on amd64 and its meta page magic (go.etcd.io/bbolt db.go, page.go).
const PAGE: usize = 4096;
const BOLT_MAGIC: u32 = 0xED0C_DAED;
const BOLT_VERSION: u32 = 2;
/// The chunk size of upstream's stream.Chunker (internal/pkg/stream: 4 KiB reads) is smaller;
/// 1 MiB keeps the loopback stream quick and under the 32 MiB message limit.
const CHUNK: usize = 1024 * 1024;

/// One meta page of a bbolt file: page header, then magic, version, page size, flags, root
/// bucket, freelist, high-water page id, transaction id and the FNV-64a checksum of the
/// fields before it (go.etcd.io/bbolt page.go, `meta`).
fn meta_page(page_id: u64, pages: u64, txid: u64) -> Vec<u8> {
    let mut p = vec![0u8; PAGE];
    p[0..8].copy_from_slice(&page_id.to_le_bytes());
    p[8..10].copy_from_slice(&0x04u16.to_le_bytes()); // metaPageFlag
    let mut meta = Vec::with_capacity(64);
    meta.extend_from_slice(&BOLT_MAGIC.to_le_bytes());
    meta.extend_from_slice(&BOLT_VERSION.to_le_bytes());
    meta.extend_from_slice(&(PAGE as u32).to_le_bytes());
    meta.extend_from_slice(&0u32.to_le_bytes());
    meta.extend_from_slice(&3u64.to_le_bytes()); // root bucket page
    meta.extend_from_slice(&0u64.to_le_bytes()); // root sequence
    meta.extend_from_slice(&2u64.to_le_bytes()); // freelist page
    meta.extend_from_slice(&pages.to_le_bytes());
    meta.extend_from_slice(&txid.to_le_bytes());
    let mut fnv: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &meta {
        fnv ^= u64::from(*b);
        fnv = fnv.wrapping_mul(0x0000_0100_0000_01b3);
    }
    meta.extend_from_slice(&fnv.to_le_bytes());
    p[16..16 + meta.len()].copy_from_slice(&meta);
    p
}

/// The bytes of the database file from `offset`, `len` of them: two meta pages, then pages
/// of data that depend only on the member and the offset, so the same file streams twice the
/// same.
fn db_bytes(member_id: u64, total: u64, txid: u64, offset: u64, len: usize) -> Vec<u8> {
    let pages = total / PAGE as u64;
    let mut out = Vec::with_capacity(len);
    let mut at = offset;
    while out.len() < len {
        let page_id = at / PAGE as u64;
        let within = (at % PAGE as u64) as usize;
        let page = if page_id < 2 {
            meta_page(page_id, pages, txid + page_id)
        } else {
            filler_page(member_id, page_id)
        };
        let take = (PAGE - within).min(len - out.len());
        out.extend_from_slice(&page[within..within + take]);
        at += take as u64;
    }
    out
}

fn filler_page(member_id: u64, page_id: u64) -> Vec<u8> {
    let mut x = member_id ^ page_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut p = Vec::with_capacity(PAGE);
    p.extend_from_slice(&page_id.to_le_bytes());
    p.extend_from_slice(&0x10u16.to_le_bytes()); // leafPageFlag
    while p.len() < PAGE {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p.extend_from_slice(&x.to_le_bytes());
    }
    p.truncate(PAGE);
    p
}

/// Snapshot callers: upstream's role rules give it to os:admin, os:operator and
/// os:etcd:backup (internal/app/machined/pkg/system/services/machined.go, v1.10 to v1.13).
fn require_snapshot_role<T>(req: &Request<T>) -> Result<(), Status> {
    if holds_etcd_backup(req) || require(req, Role::Operator).is_ok() {
        Ok(())
    } else {
        Err(Status::permission_denied("not authorized"))
    }
}

/// Answers EtcdSnapshot as upstream's handler (v1alpha1_server.go, v1.10 to v1.13): control
/// planes only, the local member's `Snapshot` streamed in chunks. etcd's server sends the
/// database then its SHA-256 (server/etcdserver/api/v3rpc/maintenance.go, `Snapshot`). One
/// node per call: talosctl's `etcd snapshot` refuses several.
pub(crate) async fn snapshot(
    core: &Arc<Core>,
    request: Request<EtcdSnapshotRequest>,
) -> Result<SnapshotStream, Status> {
    require_snapshot_role(&request)?;
    let t = match route(core, &request, "/machine.MachineService/EtcdSnapshot", true)? {
        Route::One(t) => t,
        Route::Many(mut list) if list.len() == 1 => list.remove(0).1?,
        Route::Many(_) => {
            return Err(Status::invalid_argument(
                "etcd snapshot streams one node's database: name one node",
            ));
        }
    };
    slow_down(&t.node).await;
    let (total, txid, member_id) = snapshot_source(&t)?;
    record(core, &t, "MachineService.EtcdSnapshot");
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(stream_snapshot(tx, member_id, total, txid));
    Ok(ReceiverStream::new(rx))
}

fn snapshot_source(t: &Target) -> Result<(u64, u64, u64), Status> {
    if t.node.role() != NodeRole::ControlPlane {
        return Err(Status::unimplemented(
            "etcd snapshot is only available on control plane nodes",
        ));
    }
    let etcd = t.cluster.etcd();
    if !etcd.members.contains(&t.node.node_index) || !t.cluster.member_healthy(t.node.node_index) {
        return Err(Status::unknown(
            "failed reading etcd snapshot: context deadline exceeded",
        ));
    }
    let (size, _) = db_sizes(t.cluster.nodes.get(t.node.node_index), &etcd);
    let total = (size.max(0) as u64 / PAGE as u64).max(2) * PAGE as u64;
    Ok((total, etcd.raft_index, t.node.etcd_member_id()))
}

async fn stream_snapshot(
    tx: mpsc::Sender<Result<Data, Status>>,
    member_id: u64,
    total: u64,
    txid: u64,
) {
    let mut hash = ring::digest::Context::new(&ring::digest::SHA256);
    let mut offset = 0u64;
    while offset < total {
        let len = CHUNK.min((total - offset) as usize);
        let bytes = db_bytes(member_id, total, txid, offset, len);
        hash.update(&bytes);
        offset += len as u64;
        let chunk = Data {
            metadata: None,
            bytes,
        };
        if tx.send(Ok(chunk)).await.is_err() {
            return;
        }
    }
    let sum = hash.finish().as_ref().to_vec();
    let _ = tx
        .send(Ok(Data {
            metadata: None,
            bytes: sum,
        }))
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_starts_with_two_bolt_meta_pages_and_reads_the_same_in_any_chunks() {
        let total = 64 * PAGE as u64;
        let whole = db_bytes(7, total, 100, 0, total as usize);
        assert_eq!(&whole[16..20], &BOLT_MAGIC.to_le_bytes());
        assert_eq!(&whole[PAGE + 16..PAGE + 20], &BOLT_MAGIC.to_le_bytes());
        let mut pieces = Vec::new();
        let mut at = 0;
        for len in [5usize, 4091, 10_000, 3, 10_000_000] {
            let len = len.min(total as usize - at);
            pieces.extend(db_bytes(7, total, 100, at as u64, len));
            at += len;
        }
        assert_eq!(pieces, whole);
        assert_ne!(db_bytes(8, total, 100, 0, total as usize), whole);
    }
}
