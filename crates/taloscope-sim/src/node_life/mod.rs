//! What happens to a simulated machine over time: its apid listener, first start and boot, the
//! reboot, shutdown and upgrade sequences, nodes joining at run time, clusters formed from a
//! booted machine config, and Kubernetes components restarting on a new config.
pub(crate) mod apid_listener;
pub(crate) mod component_restart;
pub(crate) mod config_rollback;
pub(crate) mod formation;
pub(crate) mod growth;
pub(crate) mod node;
