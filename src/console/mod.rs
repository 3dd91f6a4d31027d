//! The interactive console's IO side: the event loop that feeds the terminal
//! and app events into app's pure update step, and the effect runner that
//! starts log streams, health checks and the provision wizard's reads, and every
//! operation on its one runner (`run_operation`: node and etcd actions, CAPI fixes, cluster
//! creates and deletes, CAPI scales, the Talos, Kubernetes and CAPI-way upgrades, provisions
//! and VM terminates). Sits above `app` and `views`.
mod follow_provisions;
pub mod run;
mod run_actions;
pub mod run_config;
pub mod run_create;
mod run_health;
pub mod run_logs;
mod run_operation;
mod run_provision_wizard;
pub mod run_resources;
mod run_upgrade_plan;
// The plans of a delete, a CAPI scale and a CAPI-way upgrade, read for their plan screens.
mod read_plans;
