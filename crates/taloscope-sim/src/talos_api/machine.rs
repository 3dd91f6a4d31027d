//! `machine.MachineService` as a simulated node answers it: version, hostname, services, the
//! legacy Upgrade, Reboot, Rollback, ApplyConfiguration and the Events stream — with Talos's
//! role rules.
//! The etcd calls are answered in machine_etcd, Logs and Dmesg in logs, the reads of what runs
//! inside the node in machine_reads.
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::apid::{
    Role, Route, Target, error_metadata, fan_out, require, require_etcd_read, route, slow_down,
};
use super::apply_configuration::apply;
use super::etcd_service;
use super::image_pull;
use super::machine_changes::{image_pull_one, locked, reboot_sequence, rollback, upgrade};
pub(crate) use super::machine_changes::{image_version, record};
use super::machine_etcd::{
    alarm_disarm, alarm_list, defragment, etcd_status, forfeit, leave, member_list, remove_member,
};
use super::machine_reads;
use super::service_restart::restart_service;
use crate::model::clock::actor_id;
use crate::model::core::Core;
use crate::model::events::stream_events;
use crate::node_life::node::{Sequence, service_ids, spawn_reboot};
use taloscope_proto::common::Metadata;
use taloscope_proto::machine::machine_service_server::MachineService;
use taloscope_proto::machine::*;

/// The MachineService every simulated node serves.
pub struct MachineApi {
    core: Arc<Core>,
}

impl MachineApi {
    pub(crate) fn new(core: Arc<Core>) -> MachineApi {
        MachineApi { core }
    }

    fn route<T>(&self, req: &Request<T>, method: &str) -> Result<Route, Status> {
        route(&self.core, req, method, true)
    }
}

const METHOD: &str = "/machine.MachineService/";

fn version_info(t: &Target) -> Version {
    let tag = t.node.status.borrow().talos_version.clone();
    Version {
        metadata: None,
        version: Some(VersionInfo {
            sha: format!("{:08x}", t.node.etcd_member_id() as u32),
            tag,
            built: String::new(),
            go_version: "go1.24.9".into(),
            os: "linux".into(),
            arch: "amd64".into(),
        }),
        platform: Some(PlatformInfo {
            name: "metal".into(),
            mode: "metal".into(),
        }),
        features: Some(FeaturesInfo { rbac: true }),
    }
}

/// The service's recent history, as `talosctl service` shows it.
fn service_events(waiting: bool) -> ServiceEvents {
    let event = |msg: &str, state: &str| ServiceEvent {
        msg: msg.into(),
        state: state.into(),
        ts: None,
    };
    let mut events = vec![
        event("Starting service", "Starting"),
        event("Service started as goroutine", "Preparing"),
    ];
    if !waiting {
        events.push(event("Service running", "Running"));
        events.push(event("Health check successful", "Running"));
    }
    ServiceEvents { events }
}

fn service_list(t: &Target) -> ServiceList {
    let ready = t.node.status.borrow().ready;
    let restarting = t.node.lock().restarting.clone();
    let services = service_ids(t.node.role())
        .iter()
        .map(|id| {
            if *id == "etcd" && etcd_service::stopped(&t.node) {
                return etcd_service::stopped_info();
            }
            let waiting =
                (!ready && matches!(*id, "kubelet" | "etcd")) || restarting.iter().any(|r| r == id);
            let etcd_sick = *id == "etcd" && t.node.faults().etcd_unhealthy;
            ServiceInfo {
                id: id.to_string(),
                state: if waiting { "Preparing" } else { "Running" }.into(),
                events: Some(service_events(waiting)),
                health: Some(ServiceHealth {
                    unknown: waiting,
                    healthy: !waiting && !etcd_sick,
                    last_message: if etcd_sick {
                        "context deadline exceeded".into()
                    } else {
                        String::new()
                    },
                    last_change: None,
                }),
            }
        })
        .collect();
    ServiceList {
        metadata: None,
        services,
    }
}

/// A unary call answered per targeted node; `|t, body|` also lends each node the request body.
macro_rules! unary {
    ($self:ident, $req:ident, $method:literal, $role:expr, $resp:ident, |$t:ident, $b:ident| $body:expr) => {{
        let $b = $req.get_ref().clone();
        let $b = &$b;
        unary!($self, $req, $method, $role, $resp, |$t| $body)
    }};
    ($self:ident, $req:ident, $method:literal, $role:expr, $resp:ident, |$t:ident| $body:expr) => {{
        require(&$req, $role)?;
        let route = $self.route(&$req, concat!("/machine.MachineService/", $method))?;
        let messages = fan_out(route, |$t: Target| async move { $body }).await?;
        Ok(Response::new($resp { messages }))
    }};
}

#[tonic::async_trait]
impl MachineService for MachineApi {
    async fn service_restart(
        &self,
        request: Request<ServiceRestartRequest>,
    ) -> Result<Response<ServiceRestartResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "ServiceRestart",
            Role::Operator,
            ServiceRestartResponse,
            |t, body| {
                restart_service(core, &t, &body.id)?;
                record(core, &t, "MachineService.ServiceRestart");
                Ok(ServiceRestart {
                    metadata: None,
                    resp: format!("Service {:?} restarted", body.id),
                })
            }
        )
    }

    async fn shutdown(
        &self,
        request: Request<ShutdownRequest>,
    ) -> Result<Response<ShutdownResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "Shutdown",
            Role::Operator,
            ShutdownResponse,
            |t, body| {
                // v1alpha1_server.go `Shutdown` runs the sequence WithTakeover: it does not
                // wait for a running one, but the sim's node runs one sequence at a time.
                let actor = actor_id();
                let sequence = Sequence::Shutdown { force: body.force };
                if spawn_reboot(core, &t.cluster, &t.node, actor.clone(), sequence) {
                    record(core, &t, "MachineService.Shutdown");
                    Ok(Shutdown {
                        metadata: None,
                        actor_id: actor,
                    })
                } else {
                    Err(locked())
                }
            }
        )
    }

    async fn apply_configuration(
        &self,
        request: Request<ApplyConfigurationRequest>,
    ) -> Result<Response<ApplyConfigurationResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "ApplyConfiguration",
            Role::Admin,
            ApplyConfigurationResponse,
            |t, body| apply(core, &t, body)
        )
    }

    type EventsStream = ReceiverStream<Result<Event, Status>>;

    async fn events(
        &self,
        request: Request<EventsRequest>,
    ) -> Result<Response<Self::EventsStream>, Status> {
        require(&request, Role::Reader)?;
        let route = self.route(&request, &format!("{METHOD}Events"))?;
        let req = request.into_inner();
        let (tx, rx) = mpsc::channel(64);
        let targets: Vec<(Option<String>, Result<Target, Status>)> = match route {
            Route::One(t) => vec![(None, Ok(t))],
            Route::Many(list) => list.into_iter().map(|(n, t)| (Some(n), t)).collect(),
        };
        for (name, target) in targets {
            let tx = tx.clone();
            let req = req.clone();
            let stop = self.core.stop.subscribe();
            match target {
                Ok(t) => {
                    tokio::spawn(async move {
                        slow_down(&t.node).await;
                        let metadata = name.map(|hostname| Metadata {
                            hostname,
                            ..Metadata::default()
                        });
                        stream_events(&t.node.events, req, metadata, tx, stop).await;
                    });
                }
                Err(status) => {
                    let hostname = name.unwrap_or_default();
                    let event = Event {
                        metadata: Some(error_metadata(&hostname, &status)),
                        ..Event::default()
                    };
                    tokio::spawn(async move {
                        let _ = tx.send(Ok(event)).await;
                    });
                }
            }
        }
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn etcd_member_list(
        &self,
        request: Request<EtcdMemberListRequest>,
    ) -> Result<Response<EtcdMemberListResponse>, Status> {
        require_etcd_read(&request)?;
        unary!(
            self,
            request,
            "EtcdMemberList",
            // Checked above: os:etcd:backup is outside the role chain.
            Role::None,
            EtcdMemberListResponse,
            |t| member_list(&t)
        )
    }

    async fn etcd_forfeit_leadership(
        &self,
        request: Request<EtcdForfeitLeadershipRequest>,
    ) -> Result<Response<EtcdForfeitLeadershipResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "EtcdForfeitLeadership",
            Role::Admin,
            EtcdForfeitLeadershipResponse,
            |t| {
                let answer = forfeit(&t)?;
                record(core, &t, "MachineService.EtcdForfeitLeadership");
                Ok(answer)
            }
        )
    }

    async fn etcd_alarm_list(
        &self,
        request: Request<()>,
    ) -> Result<Response<EtcdAlarmListResponse>, Status> {
        require_etcd_read(&request)?;
        unary!(
            self,
            request,
            "EtcdAlarmList",
            // Checked above: os:etcd:backup is outside the role chain.
            Role::None,
            EtcdAlarmListResponse,
            |t| alarm_list(&t)
        )
    }

    async fn etcd_status(
        &self,
        request: Request<()>,
    ) -> Result<Response<EtcdStatusResponse>, Status> {
        require_etcd_read(&request)?;
        // A few raft entries per simulated second, as a lightly loaded cluster writes.
        let sim_seconds = self.core.started.elapsed().as_secs_f64() * self.core.clock.scale();
        let advance = (sim_seconds * 4.0) as u64;
        unary!(
            self,
            request,
            "EtcdStatus",
            // Checked above: os:etcd:backup is outside the role chain.
            Role::None,
            EtcdStatusResponse,
            |t| etcd_status(&t, advance)
        )
    }

    async fn hostname(&self, request: Request<()>) -> Result<Response<HostnameResponse>, Status> {
        unary!(
            self,
            request,
            "Hostname",
            Role::Reader,
            HostnameResponse,
            |t| Ok(Hostname {
                metadata: None,
                hostname: t.node.name().to_string(),
            })
        )
    }

    type ReadStream = super::files::ReadStream;

    async fn read(
        &self,
        request: Request<ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        super::files::read(&self.core, request)
            .await
            .map(Response::new)
    }

    async fn reboot(
        &self,
        request: Request<RebootRequest>,
    ) -> Result<Response<RebootResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "Reboot",
            Role::Operator,
            RebootResponse,
            |t, body| {
                let actor = actor_id();
                let sequence = reboot_sequence(&t, body.mode);
                if spawn_reboot(core, &t.cluster, &t.node, actor.clone(), sequence) {
                    record(core, &t, "MachineService.Reboot");
                    Ok(Reboot {
                        metadata: None,
                        actor_id: actor,
                    })
                } else {
                    Err(locked())
                }
            }
        )
    }

    async fn rollback(
        &self,
        request: Request<RollbackRequest>,
    ) -> Result<Response<RollbackResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "Rollback",
            Role::Admin,
            RollbackResponse,
            |t| rollback(core, &t)
        )
    }

    async fn service_list(
        &self,
        request: Request<()>,
    ) -> Result<Response<ServiceListResponse>, Status> {
        unary!(
            self,
            request,
            "ServiceList",
            Role::Reader,
            ServiceListResponse,
            |t| Ok(service_list(&t))
        )
    }

    async fn upgrade(
        &self,
        request: Request<UpgradeRequest>,
    ) -> Result<Response<UpgradeResponse>, Status> {
        let core = &self.core;
        let deadline = image_pull::caller_deadline(&request);
        unary!(
            self,
            request,
            "Upgrade",
            Role::Admin,
            UpgradeResponse,
            |t, body| upgrade(core, &t, body, deadline).await
        )
    }

    async fn image_pull(
        &self,
        request: Request<ImagePullRequest>,
    ) -> Result<Response<ImagePullResponse>, Status> {
        let core = &self.core;
        let deadline = image_pull::caller_deadline(&request);
        unary!(
            self,
            request,
            "ImagePull",
            Role::Operator,
            ImagePullResponse,
            |t, body| image_pull_one(core, &t, body, deadline).await
        )
    }

    type LogsStream = super::logs::DataStream;

    async fn logs(
        &self,
        request: Request<LogsRequest>,
    ) -> Result<Response<Self::LogsStream>, Status> {
        super::logs::logs(&self.core, request)
            .await
            .map(Response::new)
    }

    // Cluster creation (bootstrap.rs): v1alpha1_server.go `Bootstrap` and `Kubeconfig`.
    async fn bootstrap(
        &self,
        request: Request<BootstrapRequest>,
    ) -> Result<Response<BootstrapResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "Bootstrap",
            Role::Admin,
            BootstrapResponse,
            |t| {
                super::bootstrap::bootstrap(core, &t)?;
                Ok(Bootstrap { metadata: None })
            }
        )
    }

    type KubeconfigStream = super::logs::DataStream;

    async fn kubeconfig(
        &self,
        request: Request<()>,
    ) -> Result<Response<Self::KubeconfigStream>, Status> {
        // Admin only (pkg/machinery/role and apid's authz rules for MachineService/Kubeconfig).
        require(&request, Role::Admin)?;
        let target = match self.route(&request, "/machine.MachineService/Kubeconfig")? {
            Route::One(t) => t,
            Route::Many(_) => {
                return Err(Status::invalid_argument(
                    "one-2-many proxying is not supported for method \"/machine.MachineService/Kubeconfig\"",
                ));
            }
        };
        slow_down(&target.node).await;
        let bytes = super::bootstrap::kubeconfig(&target)?;
        let (tx, rx) = mpsc::channel(1);
        let _ = tx
            .send(Ok(taloscope_proto::common::Data {
                metadata: None,
                bytes,
            }))
            .await;
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    type DmesgStream = super::logs::DataStream;

    async fn dmesg(
        &self,
        request: Request<DmesgRequest>,
    ) -> Result<Response<Self::DmesgStream>, Status> {
        super::logs::dmesg(&self.core, request)
            .await
            .map(Response::new)
    }

    async fn version(&self, request: Request<()>) -> Result<Response<VersionResponse>, Status> {
        unary!(
            self,
            request,
            "Version",
            Role::Reader,
            VersionResponse,
            |t| Ok(version_info(&t))
        )
    }

    // ---- etcd maintenance (role rules: internal/app/machined/pkg/system/services/machined.go) ----

    async fn etcd_alarm_disarm(
        &self,
        request: Request<()>,
    ) -> Result<Response<EtcdAlarmDisarmResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "EtcdAlarmDisarm",
            Role::Operator,
            EtcdAlarmDisarmResponse,
            |t| {
                let answer = alarm_disarm(&t)?;
                record(core, &t, "MachineService.EtcdAlarmDisarm");
                Ok(answer)
            }
        )
    }

    async fn etcd_defragment(
        &self,
        request: Request<()>,
    ) -> Result<Response<EtcdDefragmentResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "EtcdDefragment",
            Role::Operator,
            EtcdDefragmentResponse,
            |t| {
                let answer = defragment(&t)?;
                record(core, &t, "MachineService.EtcdDefragment");
                Ok(answer)
            }
        )
    }

    type EtcdSnapshotStream = super::etcd_snapshot::SnapshotStream;

    async fn etcd_snapshot(
        &self,
        request: Request<EtcdSnapshotRequest>,
    ) -> Result<Response<Self::EtcdSnapshotStream>, Status> {
        super::etcd_snapshot::snapshot(&self.core, request)
            .await
            .map(Response::new)
    }

    async fn etcd_remove_member_by_id(
        &self,
        request: Request<EtcdRemoveMemberByIdRequest>,
    ) -> Result<Response<EtcdRemoveMemberByIdResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "EtcdRemoveMemberByID",
            Role::Admin,
            EtcdRemoveMemberByIdResponse,
            |t, body| {
                let answer = remove_member(&t, body.member_id)?;
                record(core, &t, "MachineService.EtcdRemoveMemberByID");
                Ok(answer)
            }
        )
    }

    /// After the member is removed, `LeaveCluster` stops etcd on the node and wipes
    /// /var/lib/etcd: the node runs no etcd until it boots again, and then joins as a new
    /// member (node_life's reboot).
    async fn etcd_leave_cluster(
        &self,
        request: Request<EtcdLeaveClusterRequest>,
    ) -> Result<Response<EtcdLeaveClusterResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "EtcdLeaveCluster",
            Role::Admin,
            EtcdLeaveClusterResponse,
            |t| {
                let answer = leave(&t)?;
                etcd_service::leave_stops_etcd(core, &t);
                record(core, &t, "MachineService.EtcdLeaveCluster");
                Ok(answer)
            }
        )
    }

    // ---- What runs inside the node (reader role: machined.go's rules; machine_reads.rs) ----

    async fn system_stat(
        &self,
        request: Request<()>,
    ) -> Result<Response<SystemStatResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "SystemStat",
            Role::Reader,
            SystemStatResponse,
            |t| Ok(machine_reads::system_stat(core, &t))
        )
    }

    async fn cpu_info(&self, request: Request<()>) -> Result<Response<CpuInfoResponse>, Status> {
        unary!(
            self,
            request,
            "CPUInfo",
            Role::Reader,
            CpuInfoResponse,
            |t| Ok(machine_reads::cpu_info(&t))
        )
    }

    async fn memory(&self, request: Request<()>) -> Result<Response<MemoryResponse>, Status> {
        let core = &self.core;
        unary!(self, request, "Memory", Role::Reader, MemoryResponse, |t| {
            Ok(machine_reads::memory(core, &t))
        })
    }

    async fn load_avg(&self, request: Request<()>) -> Result<Response<LoadAvgResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "LoadAvg",
            Role::Reader,
            LoadAvgResponse,
            |t| Ok(machine_reads::load_avg(core, &t))
        )
    }

    async fn processes(&self, request: Request<()>) -> Result<Response<ProcessesResponse>, Status> {
        let core = &self.core;
        unary!(
            self,
            request,
            "Processes",
            Role::Reader,
            ProcessesResponse,
            |t| Ok(machine_reads::processes(core, &t))
        )
    }

    async fn containers(
        &self,
        request: Request<ContainersRequest>,
    ) -> Result<Response<ContainersResponse>, Status> {
        unary!(
            self,
            request,
            "Containers",
            Role::Reader,
            ContainersResponse,
            |t, body| machine_reads::containers(&t, body)
        )
    }

    async fn netstat(
        &self,
        request: Request<NetstatRequest>,
    ) -> Result<Response<NetstatResponse>, Status> {
        unary!(
            self,
            request,
            "Netstat",
            Role::Reader,
            NetstatResponse,
            |t, body| machine_reads::netstat(&t, body)
        )
    }

    async fn mounts(&self, request: Request<()>) -> Result<Response<MountsResponse>, Status> {
        let core = &self.core;
        unary!(self, request, "Mounts", Role::Reader, MountsResponse, |t| {
            Ok(machine_reads::mounts(core, &t))
        })
    }

    type DiskUsageStream = ReceiverStream<Result<DiskUsageInfo, Status>>;

    async fn disk_usage(
        &self,
        request: Request<DiskUsageRequest>,
    ) -> Result<Response<Self::DiskUsageStream>, Status> {
        require(&request, Role::Reader)?;
        let route = self.route(&request, &format!("{METHOD}DiskUsage"))?;
        let req = request.into_inner();
        let targets: Vec<(Option<String>, Result<Target, Status>)> = match route {
            Route::One(t) => vec![(None, Ok(t))],
            Route::Many(list) => list.into_iter().map(|(n, t)| (Some(n), t)).collect(),
        };
        let mut items = Vec::new();
        for (name, target) in targets {
            match target {
                Ok(t) => {
                    slow_down(&t.node).await;
                    for mut info in machine_reads::disk_usage(&self.core, &t, &req) {
                        info.metadata = name.clone().map(|hostname| Metadata {
                            hostname,
                            ..Metadata::default()
                        });
                        items.push(Ok(info));
                    }
                }
                Err(status) => items.push(Ok(DiskUsageInfo {
                    metadata: Some(error_metadata(&name.unwrap_or_default(), &status)),
                    ..DiskUsageInfo::default()
                })),
            }
        }
        let (tx, rx) = mpsc::channel(items.len().max(1));
        for item in items {
            let _ = tx.try_send(item);
        }
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

#[cfg(test)]
mod tests {
    use super::image_version;

    #[test]
    fn installer_tags_are_read_from_image_references() {
        assert_eq!(
            image_version("ghcr.io/siderolabs/installer:v1.11.5").as_deref(),
            Some("v1.11.5")
        );
        assert_eq!(
            image_version("localhost:5000/installer:v1.13.0").as_deref(),
            Some("v1.13.0")
        );
        assert_eq!(image_version("ghcr.io/siderolabs/installer"), None);
    }
}
