//! The interactive console's IO side: the event loop that feeds the terminal
//! and app events into app's pure update step, and the effect runner that
//! starts rollouts, provisions, log streams and health checks, and every other
//! operation on its one runner (`run_operation`: node and etcd actions, CAPI fixes,
//! cluster creates and deletes, CAPI scales). Sits above `app` and `views`.
pub mod run;
mod run_actions;
pub mod run_create;
mod run_delete;
mod run_health;
pub mod run_logs;
mod run_operation;
mod run_provision;
pub mod run_resources;
mod run_rollout;
// Scaling the CAPI way from `:capi`: its plan read and its connection.
mod run_capi_scale;
// The CAPI-way upgrade's plan read.
mod run_capi_upgrade;
