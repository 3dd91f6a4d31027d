//! What happens to a simulated machine over time: its apid listener, first start and boot, the
//! reboot, shutdown and upgrade sequences, nodes joining at run time, clusters formed from a
//! booted machine config, Kubernetes components restarting on a new config, and the counters
//! of CPU, memory and disk that move while a machine runs.
pub(crate) mod apid_listener;
pub(crate) mod component_restart;
pub(crate) mod config_rollback;
pub(crate) mod formation;
pub(crate) mod growth;
pub(crate) mod machine_load;
pub(crate) mod node;
