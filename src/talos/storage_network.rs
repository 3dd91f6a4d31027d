//! The COSI resources of a node's disks, volumes and network, decoded from the YAML keys of
//! siderolabs/talos pkg/machinery/resources: block/disk.go, block/system_disk.go,
//! block/volume_status.go (namespace `runtime`), network/link_status.go, address_status.go,
//! route_status.go (`network`) and kubespan/peer_status.go (`kubespan`).
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::client::TalosClient;
use super::cosi::TypedResource;
use super::error::TalosError;
use super::machine_reads::MAX_ITEMS;

pub const DISK_TYPE: &str = "Disks.block.talos.dev";
pub const SYSTEM_DISK_TYPE: &str = "SystemDisks.block.talos.dev";
pub const VOLUME_STATUS_TYPE: &str = "VolumeStatuses.block.talos.dev";
pub const LINK_STATUS_TYPE: &str = "LinkStatuses.net.talos.dev";
pub const ADDRESS_STATUS_TYPE: &str = "AddressStatuses.net.talos.dev";
pub const ROUTE_STATUS_TYPE: &str = "RouteStatuses.net.talos.dev";
pub const KUBESPAN_PEER_STATUS_TYPE: &str = "KubeSpanPeerStatuses.kubespan.talos.dev";
/// block.go: `NamespaceName = v1alpha1.NamespaceName`.
const BLOCK_NAMESPACE: &str = "runtime";
const NETWORK_NAMESPACE: &str = "network";
const KUBESPAN_NAMESPACE: &str = "kubespan";

/// A block device (`Disks.block.talos.dev`; keys in snake case upstream).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct DiskSpec {
    pub dev_path: String,
    pub size: u64,
    pub readonly: bool,
    pub cdrom: bool,
    pub model: String,
    /// From Talos v1.14 (absent before).
    pub firmware_version: String,
    pub serial: String,
    pub transport: String,
    pub rotational: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SystemDiskSpec {
    #[serde(rename = "diskID")]
    disk_id: String,
}

/// A volume's state (`VolumeStatuses.block.talos.dev`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VolumeStatusSpec {
    pub phase: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub location: String,
    pub size: u64,
    pub filesystem: String,
    pub mount_spec: VolumeMountSpec,
    pub error_message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VolumeMountSpec {
    pub target_path: String,
}

/// A network link (`LinkStatuses.net.talos.dev`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LinkStatusSpec {
    #[serde(rename = "type")]
    pub kind: String,
    pub hardware_addr: String,
    pub mtu: u32,
    pub operational_state: String,
    pub link_state: bool,
    #[serde(rename = "speedMbit")]
    pub speed_mbit: i64,
}

/// An address on a link (`AddressStatuses.net.talos.dev`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AddressStatusSpec {
    pub address: String,
    pub link_name: String,
    pub family: String,
    pub scope: String,
}

/// A route (`RouteStatuses.net.talos.dev`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RouteStatusSpec {
    pub family: String,
    #[serde(rename = "dst")]
    pub destination: String,
    pub gateway: String,
    pub out_link_name: String,
    pub table: String,
    pub priority: u32,
}

/// A KubeSpan peer (`KubeSpanPeerStatuses.kubespan.talos.dev`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct KubeSpanPeerSpec {
    pub endpoint: String,
    pub label: String,
    /// `unknown`, `up` or `down` (kubespan/peer_state.go).
    pub state: String,
    pub receive_bytes: i64,
    pub transmit_bytes: i64,
    pub last_handshake_time: String,
}

impl TalosClient {
    async fn bounded_list<T: DeserializeOwned>(
        &self,
        node: &str,
        namespace: &str,
        kind: &str,
    ) -> Result<Vec<TypedResource<T>>, TalosError> {
        let mut list = self.cosi_list(node, namespace, kind).await?;
        list.truncate(MAX_ITEMS);
        Ok(list)
    }

    /// The node's block devices.
    pub async fn disks(&self, node: &str) -> Result<Vec<TypedResource<DiskSpec>>, TalosError> {
        self.bounded_list(node, BLOCK_NAMESPACE, DISK_TYPE).await
    }

    /// The id of the disk Talos is installed on; `None` when it runs from elsewhere (no
    /// `system-disk` resource: a Get answers NotFound).
    pub async fn system_disk(&self, node: &str) -> Result<Option<String>, TalosError> {
        match self
            .cosi_get::<SystemDiskSpec>(node, BLOCK_NAMESPACE, SYSTEM_DISK_TYPE, "system-disk")
            .await
        {
            Ok(r) => Ok(Some(r.spec.disk_id)),
            Err(TalosError::Rpc {
                code: tonic::Code::NotFound,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The node's volumes (META, STATE, EPHEMERAL, user volumes...).
    pub async fn volume_statuses(
        &self,
        node: &str,
    ) -> Result<Vec<TypedResource<VolumeStatusSpec>>, TalosError> {
        self.bounded_list(node, BLOCK_NAMESPACE, VOLUME_STATUS_TYPE)
            .await
    }

    pub async fn link_statuses(
        &self,
        node: &str,
    ) -> Result<Vec<TypedResource<LinkStatusSpec>>, TalosError> {
        self.bounded_list(node, NETWORK_NAMESPACE, LINK_STATUS_TYPE)
            .await
    }

    pub async fn address_statuses(
        &self,
        node: &str,
    ) -> Result<Vec<TypedResource<AddressStatusSpec>>, TalosError> {
        self.bounded_list(node, NETWORK_NAMESPACE, ADDRESS_STATUS_TYPE)
            .await
    }

    pub async fn route_statuses(
        &self,
        node: &str,
    ) -> Result<Vec<TypedResource<RouteStatusSpec>>, TalosError> {
        self.bounded_list(node, NETWORK_NAMESPACE, ROUTE_STATUS_TYPE)
            .await
    }

    /// The KubeSpan peers; none where KubeSpan is off.
    pub async fn kubespan_peers(
        &self,
        node: &str,
    ) -> Result<Vec<TypedResource<KubeSpanPeerSpec>>, TalosError> {
        self.bounded_list(node, KUBESPAN_NAMESPACE, KUBESPAN_PEER_STATUS_TYPE)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::super::cosi::decode_spec;
    use super::*;

    #[test]
    fn volume_status_yaml_decodes() {
        let yaml = "phase: ready\ntype: partition\nlocation: /dev/sda6\nsize: 68000000000\nfilesystem: xfs\nmountSpec:\n    targetPath: /var\n    projectQuotaSupport: true\n";
        let v: VolumeStatusSpec = decode_spec(yaml).expect("decodes");
        assert_eq!(v.phase, "ready");
        assert_eq!(v.kind, "partition");
        assert_eq!(v.mount_spec.target_path, "/var");
        assert_eq!(v.size, 68_000_000_000);
    }

    #[test]
    fn disk_and_link_yaml_decode() {
        let d: DiskSpec = decode_spec(
            "dev_path: /dev/sda\nsize: 64\npretty_size: 64 B\nmodel: QEMU\nserial: S1\ntransport: virtio\n",
        )
        .expect("decodes");
        assert_eq!(d.dev_path, "/dev/sda");
        assert_eq!(d.transport, "virtio");
        let l: LinkStatusSpec = decode_spec(
            "index: 2\ntype: ether\nmtu: 1500\noperationalState: up\nlinkState: true\nspeedMbit: 10000\n",
        )
        .expect("decodes");
        assert_eq!(l.kind, "ether");
        assert_eq!(l.speed_mbit, 10000);
        assert!(l.link_state);
    }
}
