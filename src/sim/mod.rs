//! (being built)
pub mod kube_api;
