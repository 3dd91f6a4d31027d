//! `MachineService.ServiceRestart` on a simulated node, as system.go `APIRestart` does it
//! (siderolabs/talos internal/app/machined/pkg/system/system.go, v1.10 to v1.13): which
//! services restart through the API, and the stop-and-start the node's events show.
use std::sync::Arc;

use tonic::Status;

use super::apid::Target;
use crate::model::core::Core;
use crate::model::events;
use crate::node_life::node::service_ids;
use taloscope_proto::machine::service_state_event;

/// Services that may be restarted through the API: only the kubelet implements
/// `APIRestartableService` among the services a node runs
/// (internal/app/machined/pkg/system/services/kubelet.go `APIRestartAllowed`, v1.10 to v1.13;
/// extensions too, which the sim's nodes have none of).
const API_RESTARTABLE: &[&str] = &["kubelet"];

/// Simulated seconds a restarted service takes to run again (the kubelet's health check
/// waits 2 s before its first probe: kubelet.go `HealthSettings`).
const SERVICE_RESTART_SECONDS: f64 = 2.0;

/// `ServiceRestart` as system.go `APIRestart` does it: an unknown service is "not defined",
/// a service that does not implement API restarts refuses, the kubelet stops (its events say
/// Stopping, Finished) and starts again.
pub(crate) fn restart_service(core: &Arc<Core>, t: &Target, id: &str) -> Result<(), Status> {
    if !service_ids(t.node.role()).contains(&id) {
        return Err(Status::unknown(format!("service {id:?} not defined")));
    }
    super::etcd_service::refuse_start(t, id)?;
    if !API_RESTARTABLE.contains(&id) {
        return Err(Status::unknown(format!(
            "service {id:?} doesn't support restart operation via API"
        )));
    }
    use service_state_event::Action;
    let node = t.node.clone();
    node.lock().restarting.push(id.to_string());
    node.events.push("", events::service(id, Action::Stopping));
    node.events.push("", events::service(id, Action::Finished));
    node.events.push("", events::service(id, Action::Starting));
    let (core, id) = (core.clone(), id.to_string());
    tokio::spawn(async move {
        core.clock.sleep(SERVICE_RESTART_SECONDS).await;
        node.lock().restarting.retain(|s| *s != id);
        node.events.push("", events::service(&id, Action::Running));
    });
    Ok(())
}
