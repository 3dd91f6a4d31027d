//! The node actions of `machine.MachineService` beyond reboot: `Shutdown`, `Rollback`,
//! `EtcdLeaveCluster` and `ServiceRestart` (api/machine/machine.proto), one request to one
//! node, one typed answer.
use super::calls::{machine, to_status};
use super::client::{Retry, TalosClient, node_message};
use super::error::TalosError;
use super::types::ActionAck;
use crate::proto::machine as pb;

impl TalosClient {
    /// Shuts the node down; `force` skips the cordon and drain Talos runs first. Events
    /// caused by the shutdown carry the returned actor id.
    pub async fn shutdown(&self, node: &str, force: bool) -> Result<ActionAck, TalosError> {
        const CALL: &str = "Shutdown";
        let t = Some(self.options().call_timeout);
        let req = pb::ShutdownRequest { force };
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                machine(ch)
                    .shutdown(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(ActionAck {
            ack: String::new(),
            actor_id: m.actor_id,
        })
    }

    /// Boots the node's previously installed Talos: its bootloader's default entry reverted to
    /// the other one, then a reboot, which the node starts after answering (v1alpha1_server.go
    /// `Rollback`; talosctl `rollback`). A node never upgraded has nothing there and refuses.
    pub async fn rollback(&self, node: &str) -> Result<(), TalosError> {
        const CALL: &str = "Rollback";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                let req = pb::RollbackRequest {};
                machine(ch)
                    .rollback(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(())
    }

    /// Takes the node's etcd member out of the cluster: Talos removes it (retrying while the
    /// cluster is unhealthy), stops etcd on the node and wipes its data directory
    /// (v1alpha1_server.go `EtcdLeaveCluster`, internal/pkg/etcd/etcd.go `LeaveCluster`;
    /// talosctl `etcd leave`). A worker refuses, and so does a node that runs no member.
    pub async fn etcd_leave_cluster(&self, node: &str) -> Result<(), TalosError> {
        const CALL: &str = "EtcdLeaveCluster";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                let req = pb::EtcdLeaveClusterRequest {};
                machine(ch)
                    .etcd_leave_cluster(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(())
    }

    /// Restarts one service of the node (Talos allows it for the kubelet and extensions);
    /// the node's answer, e.g. `Service "kubelet" restarted`.
    pub async fn service_restart(&self, node: &str, service: &str) -> Result<String, TalosError> {
        const CALL: &str = "ServiceRestart";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                let req = pb::ServiceRestartRequest {
                    id: service.to_string(),
                };
                machine(ch)
                    .service_restart(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(m.resp)
    }
}
