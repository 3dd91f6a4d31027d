//! taloscope: a terminal operations console for Talos Linux Kubernetes clusters.
//!
//! Layers, top to bottom (see README and STYLE.md): `cli` → `app` / `views` →
//! domain (`fleet`) → protocol clients (`talos`) → `discovery`. The simulated
//! fleet the tests run against is the separate crate `taloscope-sim`.
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod discovery;
pub mod fleet;
pub mod kube;
pub mod logging;
pub mod opennebula;
pub mod paths;
pub mod proto;
pub mod provision;
pub mod rollout;
pub mod talos;
pub mod tui;
pub mod upgrade;
pub mod versions;
pub mod views;

/// Installs ring as the process-wide rustls crypto provider. Called first thing
/// in `main` and in tests: two providers compiled in would otherwise panic.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
