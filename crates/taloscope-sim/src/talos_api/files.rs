//! `MachineService.Read` as a simulated node answers it: the boot id from the node's published
//! status, NotFound for any other path, os:admin only, as Talos's role rules say.
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status};

use super::apid::{Role, Route, Target, error_metadata, require, route, slow_down};
use crate::model::core::Core;
use taloscope_proto::common::{Data, Metadata};
use taloscope_proto::machine::ReadRequest;

const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

pub(crate) type ReadStream = ReceiverStream<Result<Data, Status>>;

/// The file's bytes on one node, as the kernel would give them.
fn contents(core: &Core, t: &Target, path: &str) -> Result<Vec<u8>, Status> {
    if path != BOOT_ID_PATH {
        return Err(Status::not_found(format!(
            "stat {path}: no such file or directory"
        )));
    }
    let status = t.node.status();
    core.fleet
        .record
        .file_read(t.cluster.name(), t.node.name(), path, status.boot);
    Ok(format!("{}\n", status.boot_id).into_bytes())
}

/// Answers a Read: one-to-one errors are the call's status; one-to-many answers carry the node
/// name in their metadata, failures as metadata-only chunks.
pub(crate) async fn read(
    core: &Arc<Core>,
    request: Request<ReadRequest>,
) -> Result<ReadStream, Status> {
    require(&request, Role::Admin)?;
    let routed = route(core, &request, "/machine.MachineService/Read", true)?;
    let path = request.into_inner().path;
    let room = match &routed {
        Route::One(_) => 1,
        Route::Many(list) => list.len().max(1),
    };
    // Room for every chunk: they are all sent before the stream is handed back.
    let (tx, rx) = mpsc::channel(room);
    match routed {
        Route::One(t) => {
            slow_down(&t.node).await;
            let bytes = contents(core, &t, &path)?;
            let _ = tx
                .send(Ok(Data {
                    metadata: None,
                    bytes,
                }))
                .await;
        }
        Route::Many(list) => {
            for (hostname, target) in list {
                let data = match target.and_then(|t| contents(core, &t, &path)) {
                    Ok(bytes) => Data {
                        metadata: Some(Metadata {
                            hostname,
                            ..Metadata::default()
                        }),
                        bytes,
                    },
                    Err(status) => Data {
                        metadata: Some(error_metadata(&hostname, &status)),
                        bytes: Vec::new(),
                    },
                };
                let _ = tx.send(Ok(data)).await;
            }
        }
    }
    Ok(ReceiverStream::new(rx))
}
