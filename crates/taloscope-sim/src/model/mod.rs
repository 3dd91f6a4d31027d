//! The simulator's data: scenarios, the fleet's state, the simulated clock, the records tests
//! read, the event log, injected faults, certificates and a node's Kubernetes components. It
//! imports no behaviour: the layers above move it along (tests/architecture.rs checks it).
pub mod capi_scenarios;
pub mod clock;
pub mod component_names;
pub mod component_specs;
pub mod config_rules;
pub mod config_secrets;
pub(crate) mod core;
pub mod error;
pub mod events;
pub mod formed_cluster;
pub(crate) mod grow_list;
pub mod injection;
pub mod kube_components;
pub mod kube_pki;
pub mod machine_inventory;
pub mod percent;
pub mod pki;
pub mod record;
pub mod scenario;
mod scenario_file;
pub mod state;
