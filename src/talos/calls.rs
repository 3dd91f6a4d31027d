//! The typed per-node calls of `machine.MachineService`, `machine.ImageService`
//! and `machine.LifecycleService`: one request to one node, one typed answer.
use futures::StreamExt;
use futures::stream::BoxStream;

use super::client::{MAX_MESSAGE_SIZE, Retry, TalosClient, node_message};
use super::error::TalosError;
use super::types::*;
use crate::proto::common;
use crate::proto::machine::{
    self as pb, image_service_client::ImageServiceClient,
    lifecycle_service_client::LifecycleServiceClient, machine_service_client::MachineServiceClient,
};

pub(super) fn machine(
    ch: tonic::transport::Channel,
) -> MachineServiceClient<tonic::transport::Channel> {
    MachineServiceClient::new(ch)
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
}

/// The containerd instance of a namespace as talosctl names them: "system" is {CRI driver,
/// SYSTEM namespace} and "cri" is {CRI, NS_CRI}; the server rejects {CONTAINERD, NS_CRI}
/// (cmd/talosctl/cmd/talos/image.go, internal/pkg/containers/image).
fn containerd(ns: ImageNamespace) -> common::ContainerdInstance {
    common::ContainerdInstance {
        driver: common::ContainerDriver::Cri as i32,
        namespace: containerd_namespace(ns) as i32,
    }
}

fn containerd_namespace(ns: ImageNamespace) -> common::ContainerdNamespace {
    match ns {
        ImageNamespace::System => common::ContainerdNamespace::NsSystem,
        ImageNamespace::Cri => common::ContainerdNamespace::NsCri,
    }
}

/// Maps a server stream's items to typed values, naming the node in errors.
fn typed_stream<T, U>(
    node: &str,
    call: &'static str,
    stream: tonic::Streaming<T>,
    convert: impl Fn(T) -> Option<U> + Send + 'static,
) -> BoxStream<'static, Result<U, TalosError>>
where
    T: Send + 'static,
    U: Send + 'static,
{
    let node = node.to_string();
    stream
        .filter_map(move |item| {
            let out = match item {
                Ok(msg) => convert(msg).map(Ok),
                Err(status) => Some(Err(TalosError::from_status(&node, call, &status))),
            };
            futures::future::ready(out)
        })
        .boxed()
}

impl TalosClient {
    /// The Talos version of one node.
    pub async fn version(&self, node: &str) -> Result<NodeVersion, TalosError> {
        const CALL: &str = "Version";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .version(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(NodeVersion::from)
    }

    /// The node's hostname (its name in the fleet).
    pub async fn hostname(&self, node: &str) -> Result<String, TalosError> {
        const CALL: &str = "Hostname";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .hostname(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|m| m.hostname)
    }

    /// The node's system services and their health.
    pub async fn service_list(&self, node: &str) -> Result<Vec<ServiceStatus>, TalosError> {
        const CALL: &str = "ServiceList";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .service_list(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let list = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(list.services.into_iter().map(ServiceStatus::from).collect())
    }

    /// The etcd member list as seen from a control-plane node.
    pub async fn etcd_member_list(&self, node: &str) -> Result<Vec<EtcdMember>, TalosError> {
        const CALL: &str = "EtcdMemberList";
        let t = Some(self.options().call_timeout);
        let req = pb::EtcdMemberListRequest { query_local: false };
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .etcd_member_list(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        let list = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(list.members.into_iter().map(EtcdMember::from).collect())
    }

    /// The status of the etcd member on a control-plane node (workers refuse).
    pub async fn etcd_status(&self, node: &str) -> Result<EtcdMemberStatus, TalosError> {
        const CALL: &str = "EtcdStatus";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .etcd_status(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let status = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        status
            .member_status
            .map(EtcdMemberStatus::from)
            .ok_or_else(|| TalosError::Decode {
                node: node.to_string(),
                call: CALL,
                reason: "no member_status in the reply".into(),
            })
    }

    /// Active etcd alarms of the cluster, as seen from a control-plane node.
    pub async fn etcd_alarm_list(&self, node: &str) -> Result<Vec<EtcdAlarm>, TalosError> {
        const CALL: &str = "EtcdAlarmList";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::Idempotent, |ch| async move {
                machine(ch)
                    .etcd_alarm_list(self.request(node, CALL, (), t).map_err(to_status)?)
                    .await
            })
            .await?;
        let alarms = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(alarms
            .member_alarms
            .iter()
            .filter_map(EtcdAlarm::from_proto)
            .collect())
    }

    /// Asks the node's etcd member to hand leadership to another member.
    /// Returns the member that answered.
    pub async fn etcd_forfeit_leadership(&self, node: &str) -> Result<String, TalosError> {
        const CALL: &str = "EtcdForfeitLeadership";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                let req = pb::EtcdForfeitLeadershipRequest {};
                machine(ch)
                    .etcd_forfeit_leadership(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|m| m.member)
    }

    /// The legacy `MachineService.Upgrade` (Talos < 1.13 path; the node checks
    /// etcd health itself on control planes unless forced).
    ///
    /// Bound by `opts.bound`, not the unary call timeout: the node pulls and validates the
    /// installer image under the request's context before it answers, and talosctl sets no
    /// deadline (follows internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go,
    /// `Upgrade`).
    pub async fn upgrade(&self, node: &str, opts: &LegacyUpgrade) -> Result<ActionAck, TalosError> {
        const CALL: &str = "Upgrade";
        let bound = opts.bound;
        let t = Some(bound);
        let req = pb::UpgradeRequest {
            image: opts.image.clone(),
            preserve: opts.preserve,
            stage: opts.stage,
            force: opts.force,
            reboot_mode: if opts.powercycle {
                pb::upgrade_request::RebootMode::Powercycle as i32
            } else {
                pb::upgrade_request::RebootMode::Default as i32
            },
        };
        let resp = self
            .call_within(node, CALL, Retry::OnlyIfNotSent, bound, |ch| {
                let req = req.clone();
                async move {
                    machine(ch)
                        .upgrade(self.request(node, CALL, req, t).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(ActionAck {
            ack: m.ack,
            actor_id: m.actor_id,
        })
    }

    /// Reboots the node; events caused by the reboot carry the returned actor id.
    pub async fn reboot(&self, node: &str, mode: RebootMode) -> Result<ActionAck, TalosError> {
        const CALL: &str = "Reboot";
        let t = Some(self.options().call_timeout);
        let req = pb::RebootRequest {
            mode: mode.to_proto(),
        };
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                machine(ch)
                    .reboot(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(ActionAck {
            ack: String::new(),
            actor_id: m.actor_id,
        })
    }

    /// Applies a whole machine configuration (multi-document YAML); `try_timeout`: how long
    /// a `Try` change stands before the node reverts it (the node's default when `None`).
    pub async fn apply_configuration(
        &self,
        node: &str,
        config: &[u8],
        mode: ApplyMode,
        dry_run: bool,
        try_timeout: Option<std::time::Duration>,
    ) -> Result<AppliedConfiguration, TalosError> {
        const CALL: &str = "ApplyConfiguration";
        let t = Some(self.options().call_timeout);
        let req = pb::ApplyConfigurationRequest {
            data: config.to_vec(),
            mode: mode.to_proto(),
            dry_run,
            try_mode_timeout: try_timeout.and_then(|d| prost_types::Duration::try_from(d).ok()),
        };
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| {
                let req = req.clone();
                async move {
                    machine(ch)
                        .apply_configuration(self.request(node, CALL, req, t).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        let m = node_message(node, CALL, resp.messages, |m| m.metadata.as_ref())?;
        Ok(AppliedConfiguration {
            mode: AppliedMode::from_proto(m.mode),
            mode_details: m.mode_details,
            warnings: m.warnings,
        })
    }

    /// `MachineService.ImagePull` (Talos 1.10 and later): pulls `image` into the namespace and
    /// answers once it is pulled, so it runs under `bound` rather than the call timeout.
    pub async fn machine_image_pull(
        &self,
        node: &str,
        image: &str,
        namespace: ImageNamespace,
        bound: std::time::Duration,
    ) -> Result<(), TalosError> {
        const CALL: &str = "MachineImagePull";
        let req = pb::ImagePullRequest {
            namespace: containerd_namespace(namespace) as i32,
            reference: image.to_string(),
        };
        let resp = self
            .call_within(node, CALL, Retry::OnlyIfNotSent, bound, |ch| {
                let req = req.clone();
                async move {
                    machine(ch)
                        .image_pull(
                            self.request(node, CALL, req, Some(bound))
                                .map_err(to_status)?,
                        )
                        .await
                }
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|_| ())
    }

    /// `ImageService.Pull` (Talos ≥ 1.13): layer progress, then the pulled name.
    /// Only the opening is bounded (by the stream-opening timeout); the caller bounds the rest.
    pub async fn image_pull(
        &self,
        node: &str,
        image: &str,
        namespace: ImageNamespace,
    ) -> Result<BoxStream<'static, Result<ImagePullProgress, TalosError>>, TalosError> {
        const CALL: &str = "ImagePull";
        let req = pb::ImageServicePullRequest {
            containerd: Some(containerd(namespace)),
            image_ref: image.to_string(),
        };
        let stream = self
            .open_stream(node, CALL, Retry::OnlyIfNotSent, |ch| {
                let req = req.clone();
                async move {
                    ImageServiceClient::new(ch)
                        .max_decoding_message_size(MAX_MESSAGE_SIZE)
                        .max_encoding_message_size(MAX_MESSAGE_SIZE)
                        .pull(self.request(node, CALL, req, None).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        Ok(typed_stream(node, CALL, stream, pull_progress))
    }

    /// `LifecycleService.Upgrade` (Talos ≥ 1.13): writes the new boot assets
    /// from a pulled installer image; does not reboot and checks no etcd health.
    pub async fn lifecycle_upgrade(
        &self,
        node: &str,
        image_name: &str,
        namespace: ImageNamespace,
    ) -> Result<BoxStream<'static, Result<UpgradeProgress, TalosError>>, TalosError> {
        const CALL: &str = "LifecycleUpgrade";
        let req = pb::LifecycleServiceUpgradeRequest {
            containerd: Some(containerd(namespace)),
            source: Some(pb::InstallArtifactsSource {
                image_name: image_name.to_string(),
            }),
        };
        let stream = self
            .open_stream(node, CALL, Retry::OnlyIfNotSent, |ch| {
                let req = req.clone();
                async move {
                    LifecycleServiceClient::new(ch)
                        .max_decoding_message_size(MAX_MESSAGE_SIZE)
                        .max_encoding_message_size(MAX_MESSAGE_SIZE)
                        .upgrade(self.request(node, CALL, req, None).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        Ok(typed_stream(node, CALL, stream, |m| {
            use pb::lifecycle_service_install_progress::Response;
            match m.progress.and_then(|p| p.response)? {
                Response::Message(s) => Some(UpgradeProgress::Message(s)),
                Response::ExitCode(c) => Some(UpgradeProgress::Exited(c)),
            }
        }))
    }
}

fn pull_progress(m: pb::ImageServicePullResponse) -> Option<ImagePullProgress> {
    use pb::image_service_pull_response::Response;
    match m.response? {
        Response::Name(image_name) => Some(ImagePullProgress::Pulled { image_name }),
        Response::PullProgress(p) => {
            let progress = p.progress.unwrap_or_default();
            let status = pb::image_service_pull_layer_progress::Status::try_from(progress.status)
                .map(|s| s.as_str_name().to_ascii_lowercase().replace('_', " "))
                .unwrap_or_else(|_| "unknown".into());
            Some(ImagePullProgress::Layer {
                layer_id: p.layer_id,
                status,
                offset: progress.offset,
                total: progress.total,
            })
        }
    }
}

/// Request-building errors travel as a status through the call closure and
/// come out as a typed error again (the node address is named in both).
pub(crate) fn to_status(err: TalosError) -> tonic::Status {
    tonic::Status::invalid_argument(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerd_instances_are_the_ones_talosctl_sends() {
        let system = containerd(ImageNamespace::System);
        assert_eq!(system.driver, common::ContainerDriver::Cri as i32);
        assert_eq!(
            system.namespace,
            common::ContainerdNamespace::NsSystem as i32
        );
        let cri = containerd(ImageNamespace::Cri);
        assert_eq!(cri.driver, common::ContainerDriver::Cri as i32);
        assert_eq!(cri.namespace, common::ContainerdNamespace::NsCri as i32);
    }

    #[test]
    fn the_legacy_image_pull_request_has_upstreams_field_numbers() {
        use prost::Message;
        let bytes = pb::ImagePullRequest {
            namespace: common::ContainerdNamespace::NsCri as i32,
            reference: "r".into(),
        }
        .encode_to_vec();
        // field 1 varint = NS_CRI (2), field 2 length-delimited "r" (api/machine/machine.proto)
        assert_eq!(bytes, [0x08, 0x02, 0x12, 0x01, b'r']);
    }
}
