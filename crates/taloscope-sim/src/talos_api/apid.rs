//! apid's request side for every simulated node: the caller's role from its client certificate,
//! and `node` / `nodes` metadata routing answered in-process from fleet state (the listeners that
//! carry the requests are node_life/apid_listener.rs).
use std::future::Future;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Status};

use crate::model::core::Core;
use crate::model::state::{ClusterState, SimNode};
use crate::node_life::apid_listener::Endpoint;
use taloscope_proto::common::Metadata;
use taloscope_proto::google::rpc;

/// The caller's Talos role, from the client certificate's Subject Organization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Role {
    None,
    Reader,
    Operator,
    Admin,
}

/// The Subject Organizations of the caller's client certificate (its Talos roles).
fn organizations<T>(req: &Request<T>) -> Vec<String> {
    let Some(certs) = req.peer_certs() else {
        return Vec::new();
    };
    let Some(first) = certs.first() else {
        return Vec::new();
    };
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(first.as_ref()) else {
        return Vec::new();
    };
    cert.subject()
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(String::from)
        .collect()
}

pub(crate) fn role_of<T>(req: &Request<T>) -> Role {
    organizations(req)
        .iter()
        .map(|o| match o.as_str() {
            "os:admin" => Role::Admin,
            "os:operator" => Role::Operator,
            "os:reader" => Role::Reader,
            _ => Role::None,
        })
        .max()
        .unwrap_or(Role::None)
}

/// Whether the caller holds `os:etcd:backup`, the role outside the reader < operator < admin
/// chain that only etcd snapshots (and the etcd reads) accept
/// (siderolabs/talos pkg/machinery/role/role.go).
pub(crate) fn holds_etcd_backup<T>(req: &Request<T>) -> bool {
    organizations(req).iter().any(|o| o == "os:etcd:backup")
}

/// EtcdMemberList, EtcdStatus and EtcdAlarmList: os:reader and up, or os:etcd:backup
/// (internal/app/machined/pkg/system/services/machined.go `rules`, v1.10.7 to v1.13; v1.10.0
/// still gave EtcdStatus and EtcdAlarmList to admin and operator only, before the sim's
/// oldest version).
pub(crate) fn require_etcd_read<T>(req: &Request<T>) -> Result<(), Status> {
    if holds_etcd_backup(req) {
        Ok(())
    } else {
        require(req, Role::Reader)
    }
}

/// Refuses the call unless the caller holds at least `needed`, worded as Talos does.
pub(crate) fn require<T>(req: &Request<T>, needed: Role) -> Result<(), Status> {
    if role_of(req) >= needed {
        Ok(())
    } else {
        Err(Status::permission_denied("not authorized"))
    }
}

/// A node a call is answered as.
#[derive(Clone)]
pub(crate) struct Target {
    pub cluster: Arc<ClusterState>,
    pub node: Arc<SimNode>,
}

/// Where a call goes, from its metadata.
pub(crate) enum Route {
    /// The endpoint itself, or the one `node` named.
    One(Target),
    /// `nodes`: each as given by the caller, resolved or failed.
    Many(Vec<(String, Result<Target, Status>)>),
}

/// The error a proxying apid reports for a node it cannot reach.
pub(crate) fn unreachable(address: &str) -> Status {
    Status::unavailable(format!(
        "connection error: desc = \"transport: Error while dialing: dial tcp {address}:50000: connect: connection refused\""
    ))
}

/// Routes a call like apid's director: `node` (single-valued) one-to-one, `nodes` one-to-many
/// (refused when `many_ok` is false, as for COSI), neither → the endpoint node.
/// Each node the call reaches counts it in the sim's record of served calls.
pub(crate) fn route<T>(
    core: &Core,
    req: &Request<T>,
    method: &str,
    many_ok: bool,
) -> Result<Route, Status> {
    let routed = direct(core, req, method, many_ok)?;
    let served = |t: &Target| {
        (core.fleet.record).served(t.cluster.name(), t.node.name(), method);
    };
    match &routed {
        Route::One(target) => served(target),
        Route::Many(list) => list
            .iter()
            .filter_map(|(_, t)| t.as_ref().ok())
            .for_each(served),
    }
    Ok(routed)
}

/// The routing itself, as siderolabs/talos internal/app/apid/pkg/director/director.go
/// `Director` reads the metadata.
fn direct<T>(core: &Core, req: &Request<T>, method: &str, many_ok: bool) -> Result<Route, Status> {
    let endpoint = req
        .extensions()
        .get::<Endpoint>()
        .copied()
        .ok_or_else(|| Status::internal("request without an endpoint"))?;
    let cluster = core
        .fleet
        .clusters
        .get(endpoint.cluster)
        .cloned()
        .ok_or_else(|| Status::internal("unknown endpoint cluster"))?;
    let node_values: Vec<_> = req.metadata().get_all("node").iter().collect();
    if node_values.len() > 1 {
        return Err(Status::invalid_argument(
            "node metadata must be single-valued",
        ));
    }
    if let Some(value) = node_values.first() {
        let name = value.to_str().unwrap_or_default().trim().to_string();
        return resolve(core, &cluster, &name).map(Route::One);
    }
    let nodes: Vec<String> = req
        .metadata()
        .get_all("nodes")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if !nodes.is_empty() {
        if !many_ok {
            return Err(Status::invalid_argument(format!(
                "one-2-many proxying is not supported for method {method:?}"
            )));
        }
        return Ok(Route::Many(
            nodes
                .into_iter()
                .map(|n| {
                    let target = resolve(core, &cluster, &n);
                    (n, target)
                })
                .collect(),
        ));
    }
    let node = cluster
        .nodes
        .get(endpoint.node)
        .cloned()
        .ok_or_else(|| Status::internal("unknown endpoint node"))?;
    Ok(Route::One(Target { cluster, node }))
}

/// A node by IP (anywhere in the fleet, port ignored). apid dials the `node` value as given
/// (siderolabs/talos internal/app/apid/pkg/director/director.go, `singleDirector` →
/// `remoteBackendFactory(target)`), so a hostname only works through DNS, which knows no sim
/// hostname: it fails as a lookup would.
fn resolve(core: &Core, _cluster: &Arc<ClusterState>, name: &str) -> Result<Target, Status> {
    let host = match name.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => name,
    };
    let found = host.parse::<Ipv4Addr>().ok().and_then(|ip| {
        core.fleet
            .node_by_address(ip)
            .map(|(c, n)| (c.clone(), n.clone()))
    });
    let Some((cluster, node)) = found else {
        return Err(Status::unavailable(format!(
            "connection error: desc = \"transport: Error while dialing: dial tcp: lookup {host}: no such host\""
        )));
    };
    if !node.status.borrow().up {
        return Err(unreachable(&node.address().to_string()));
    }
    Ok(Target { cluster, node })
}

/// Waits out a slow node's delay before it answers.
pub(crate) async fn slow_down(node: &SimNode) {
    let ms = node.spec.faults.slow_ms;
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// A per-node reply of a unary MachineService call (each starts with `common.Metadata`).
pub(crate) trait Reply: Default {
    fn set_metadata(&mut self, metadata: Metadata);
}

/// The `Metadata` apid writes in place of a failed node's reply.
pub(crate) fn error_metadata(hostname: &str, status: &Status) -> Metadata {
    Metadata {
        hostname: hostname.to_string(),
        error: status.message().to_string(),
        status: Some(rpc::Status {
            code: status.code() as i32,
            message: status.message().to_string(),
            details: vec![],
        }),
    }
}

/// Runs `answer` on every routed node. One-to-one errors are the call's error; one-to-many
/// replies get `metadata.hostname`, and failures become metadata-only entries.
pub(crate) async fn fan_out<I, F, Fut>(route: Route, answer: F) -> Result<Vec<I>, Status>
where
    I: Reply,
    F: Fn(Target) -> Fut,
    Fut: Future<Output = Result<I, Status>>,
{
    match route {
        Route::One(target) => {
            slow_down(&target.node).await;
            Ok(vec![answer(target).await?])
        }
        Route::Many(list) => {
            let answers = list.into_iter().map(|(name, target)| {
                let fut = target.map(|t| {
                    let node = t.node.clone();
                    let fut = answer(t);
                    async move {
                        slow_down(&node).await;
                        fut.await
                    }
                });
                async move {
                    let result = match fut {
                        Ok(fut) => fut.await,
                        Err(status) => Err(status),
                    };
                    match result {
                        Ok(mut item) => {
                            item.set_metadata(Metadata {
                                hostname: name,
                                ..Metadata::default()
                            });
                            item
                        }
                        Err(status) => {
                            let mut item = I::default();
                            item.set_metadata(error_metadata(&name, &status));
                            item
                        }
                    }
                }
            });
            Ok(futures::future::join_all(answers).await)
        }
    }
}

macro_rules! replies {
    ($($t:ty),* $(,)?) => {
        $(impl Reply for $t {
            fn set_metadata(&mut self, metadata: Metadata) {
                self.metadata = Some(metadata);
            }
        })*
    };
}

use taloscope_proto::machine as m;
replies!(
    m::Version,
    m::Hostname,
    m::ServiceList,
    m::EtcdMembers,
    m::EtcdStatus,
    m::EtcdAlarm,
    m::EtcdForfeitLeadership,
    m::Upgrade,
    m::Reboot,
    m::Rollback,
    m::Shutdown,
    m::ServiceRestart,
    m::ApplyConfiguration,
    m::ImagePull,
    m::Event,
);
// The etcd maintenance replies.
replies!(
    m::EtcdAlarmDisarm,
    m::EtcdDefragment,
    m::EtcdRemoveMemberById,
    m::EtcdLeaveCluster,
);
// Cluster creation.
replies!(m::Bootstrap);
// What runs inside a node.
replies!(
    m::SystemStat,
    m::CpUsInfo,
    m::Memory,
    m::LoadAvg,
    m::Process,
    m::Container,
    m::Netstat,
    m::Mounts,
);
