//! What the running sim shares with every service and every node's life: the fleet's state,
//! certificates and clock, the gRPC routes every apid listener serves, and the stop signal.
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::clock::SimClock;
use super::pki;
use super::state::FleetState;

/// What every apid handler shares.
pub(crate) struct Core {
    pub fleet: Arc<FleetState>,
    pub pki: pki::Pki,
    pub clock: SimClock,
    /// When the sim started (etcd's raft index advances with simulated time).
    pub started: std::time::Instant,
    /// The wall-clock time of `started`: log lines and kernel messages are stamped from it.
    pub started_wall: std::time::SystemTime,
    /// Taken at shutdown, which breaks the routes → services → core cycle.
    pub(crate) routes: Mutex<Option<tonic::service::Routes>>,
    /// true once the sim shuts down.
    pub stop: watch::Sender<bool>,
}

impl Core {
    pub fn routes(&self) -> Option<tonic::service::Routes> {
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
