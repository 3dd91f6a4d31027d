//! The etcd maintenance calls of `machine.MachineService`, one node at a time: alarm disarm,
//! defragment, member removal by id, and the snapshot stream (database bytes as they come).
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::calls::{machine, to_status};
use super::client::{Retry, TalosClient, node_message};
use super::error::TalosError;
use super::types::EtcdAlarm;
use crate::proto::machine as pb;

/// How long a defragment may take: etcd blocks the member while it rewrites the whole
/// database file, which for a database near its 2 GiB quota takes tens of seconds on slow
/// disks (etcd's docs suggest a minute of command timeout; talosctl sets none).
pub const DEFRAGMENT_BOUND: Duration = Duration::from_secs(300);

impl TalosClient {
    /// Disarms every etcd alarm of the cluster (the node's member asks for all); returns the
    /// alarms it disarmed.
    pub async fn etcd_alarm_disarm(&self, node: &str) -> Result<Vec<EtcdAlarm>, TalosError> {
        const CALL: &str = "EtcdAlarmDisarm";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                machine(ch)
                    .etcd_alarm_disarm(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let disarmed = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(disarmed
            .member_alarms
            .iter()
            .filter_map(EtcdAlarm::from_proto)
            .collect())
    }

    /// Defragments the etcd member of this node only.
    pub async fn etcd_defragment(&self, node: &str) -> Result<(), TalosError> {
        const CALL: &str = "EtcdDefragment";
        let t = Some(DEFRAGMENT_BOUND);
        let resp = self
            .call_within(
                node,
                CALL,
                Retry::OnlyIfNotSent,
                DEFRAGMENT_BOUND,
                |ch| async move {
                    machine(ch)
                        .etcd_defragment(self.request(node, CALL, (), t).map_err(to_status)?)
                        .await
                },
            )
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|_| ())
    }

    /// Removes the etcd member `member_id`, asked through `node` (any other control plane).
    pub async fn etcd_remove_member(&self, node: &str, member_id: u64) -> Result<(), TalosError> {
        const CALL: &str = "EtcdRemoveMemberByID";
        let t = Some(self.options().call_timeout);
        let req = pb::EtcdRemoveMemberByIdRequest { member_id };
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                machine(ch)
                    .etcd_remove_member_by_id(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|_| ())
    }

    /// The node's etcd database as it streams (etcd appends its SHA-256 to the last chunk).
    /// Opening is bound like any server stream; the caller bounds the whole read and the
    /// bytes it keeps.
    pub async fn etcd_snapshot(
        &self,
        node: &str,
    ) -> Result<BoxStream<'static, Result<Vec<u8>, TalosError>>, TalosError> {
        const CALL: &str = "EtcdSnapshot";
        let stream = self
            .open_stream(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .etcd_snapshot(
                        self.request(node, CALL, pb::EtcdSnapshotRequest {}, None)
                            .map_err(to_status)?,
                    )
                    .await
            })
            .await?;
        let node = node.to_string();
        Ok(stream
            .map(move |item| match item {
                Ok(data) => match data.metadata.filter(|md| !md.error.is_empty()) {
                    Some(md) => Err(TalosError::from_metadata(
                        &node,
                        CALL,
                        &md.error,
                        md.status.as_ref(),
                    )),
                    None => Ok(data.bytes),
                },
                Err(status) => Err(TalosError::from_status(&node, CALL, &status)),
            })
            .boxed())
    }
}
