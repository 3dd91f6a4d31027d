//! A control plane's etcd *service* stopped (as `system.Services(r).Stop(ctx, "etcd")` leaves
//! it) and what the node answers meanwhile: ServiceList, the etcd calls that go to the local
//! etcd client, readiness; a reboot starts it again (lifecycle's boot clears the stop).
use tonic::Status;

use super::apid::Target;
use crate::model::events;
use crate::model::injection::NoSuchNode;
use crate::model::state::{FleetState, SimNode};
use taloscope_proto::machine::{
    ServiceEvent, ServiceEvents, ServiceHealth, ServiceInfo, service_state_event,
};

/// The service's state once stopped: system.go `Start`'s goroutine writes `StateFinished`,
/// "Service finished successfully", when the runner returns without error, which a `Stop`
/// makes it do (siderolabs/talos internal/app/machined/pkg/system/system.go, v1.9 to v1.13;
/// the restart.Forever runner of services/etcd.go aborts its restart loop on Stop,
/// runner/restart/restart.go).
pub(crate) const STOPPED_STATE: &str = "Finished";
pub(crate) const STOPPED_MESSAGE: &str = "Service finished successfully";

impl FleetState {
    /// Stops (or, for a test, starts again) the etcd service of `node` in `cluster`: its
    /// member stops answering, the node's readiness and kube-apiserver with it.
    pub fn set_etcd_stopped(
        &self,
        cluster: &str,
        node: &str,
        stopped: bool,
    ) -> Result<(), NoSuchNode> {
        let no_such = || NoSuchNode {
            cluster: cluster.to_string(),
            node: node.to_string(),
        };
        let state = self.cluster(cluster).ok_or_else(no_such)?;
        let sim_node = state.node(node).ok_or_else(no_such)?;
        use service_state_event::Action;
        let action = if stopped {
            Action::Finished
        } else {
            Action::Running
        };
        sim_node.events.push("", events::service("etcd", action));
        self.update(sim_node, |s| s.etcd_stopped = stopped);
        if stopped {
            state.move_leader_from(sim_node.node_index);
            let mut etcd = state.etcd_lock();
            if etcd.leader == Some(sim_node.node_index) {
                etcd.leader = None;
            }
        }
        state.elect_if_leaderless();
        Ok(())
    }
}

/// What `LeaveCluster` does on the node once its member is removed (internal/pkg/etcd/etcd.go):
/// `system.Services(nil).Stop(ctx, "etcd")`, then the contents of /var/lib/etcd removed, so
/// its next boot starts etcd with no data and it joins as a new member.
pub(crate) fn leave_stops_etcd(core: &crate::model::core::Core, t: &Target) {
    let (cluster, node) = (t.cluster.name(), t.node.name());
    if core.fleet.set_etcd_stopped(cluster, node, true).is_ok() {
        core.fleet.update(&t.node, |s| s.etcd_data_wiped = true);
    }
}

/// Whether `node`'s etcd service is stopped.
pub(crate) fn stopped(node: &SimNode) -> bool {
    node.status.borrow().etcd_stopped
}

/// etcd in ServiceList while stopped, as `ServiceRunner.AsProto` gives it
/// (internal/app/machined/pkg/system/service_runner.go): the last events are the containerd
/// runner's SIGTERM (runner/containerd/containerd.go, `Stopping`) and the Finished state;
/// health was set false, "service not running", when the runner left Running
/// (service_runner.go `run`).
pub(crate) fn stopped_info() -> ServiceInfo {
    let event = |msg: &str, state: &str| ServiceEvent {
        msg: msg.into(),
        state: state.into(),
        ts: None,
    };
    ServiceInfo {
        id: "etcd".into(),
        state: STOPPED_STATE.into(),
        events: Some(ServiceEvents {
            events: vec![
                event("Starting service", "Starting"),
                event("Health check successful", "Running"),
                event(
                    "Sending SIGTERM to task etcd (PID 2204, container etcd)",
                    "Stopping",
                ),
                event(STOPPED_MESSAGE, STOPPED_STATE),
            ],
        }),
        health: Some(ServiceHealth {
            unknown: false,
            healthy: false,
            last_message: "service not running".into(),
            last_change: None,
        }),
    }
}

/// The local etcd client's calls on a node whose etcd is stopped: `etcd.NewLocalClient` dials
/// without blocking (clientv3 `New` with a DialTimeout but no WithBlock), and clientv3's calls
/// wait for a ready connection (its default `WaitForReady(true)`) until the caller's deadline;
/// the handler then wraps the deadline error (v1alpha1_server.go `EtcdStatus`: "failed to
/// query etcd status: %w"), which grpc-go answers with the wrapped status's code. The sim
/// answers at once with what the caller gets once its deadline has passed.
pub(crate) fn local_client(t: &Target, wrapped: &str) -> Result<(), Status> {
    if !stopped(&t.node) {
        return Ok(());
    }
    let message = if wrapped.is_empty() {
        "context deadline exceeded".to_string()
    } else {
        format!("{wrapped}: context deadline exceeded")
    };
    Err(Status::deadline_exceeded(message))
}

/// `EtcdMemberList` goes to every control plane's etcd (`NewClientFromControlPlaneIPs`, with
/// `WithRequireLeader`): with no member's etcd answering it waits for the deadline too, and
/// returns the client's error unwrapped (v1alpha1_server.go `EtcdMemberList`).
pub(crate) fn any_member_answers(t: &Target) -> Result<(), Status> {
    let members = t.cluster.etcd_lock().members.clone();
    let answers = members.iter().any(|&m| {
        t.cluster.nodes.get(m).is_some_and(|n| {
            let s = n.status.borrow();
            s.up && !s.rebooting && !s.etcd_stopped
        })
    });
    if answers || members.is_empty() {
        Ok(())
    } else {
        Err(Status::deadline_exceeded("context deadline exceeded"))
    }
}

/// ServiceRestart of a service that is not running is a start (system.go `APIRestart`: "restart
/// for not running service is equivalent to Start()"), and etcd implements no
/// `APIStartableService` (services/etcd.go, v1.9 to v1.13), so `APIStart` refuses.
pub(crate) fn refuse_start(t: &Target, id: &str) -> Result<(), Status> {
    if id == "etcd" && stopped(&t.node) {
        return Err(Status::unknown(format!(
            "service {id:?} doesn't support start operation via API"
        )));
    }
    Ok(())
}
