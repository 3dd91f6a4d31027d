//! The certificates screen (`:certs`, `C` on the fleet): every certificate `taloscope certs`
//! lists, of every cluster, soonest end first, as the fleet's pollers read them with the
//! command's own collector (`fleet::cert_expiry`), and which one is selected. Pure.
use super::screen::Screen;
use crate::fleet::FleetModel;
use crate::fleet::cert_expiry::{CertExpiry, soonest_first};

/// The screen's selection and where Esc goes back to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertsScreen {
    pub selected: usize,
    pub back: Option<Screen>,
}

/// Every cluster's certificates, soonest end first.
pub fn fleet_certs(fleet: &FleetModel) -> Vec<CertExpiry> {
    let mut certs: Vec<CertExpiry> = fleet
        .clusters
        .values()
        .flat_map(|live| live.certs.iter().cloned())
        .collect();
    soonest_first(&mut certs);
    certs
}
