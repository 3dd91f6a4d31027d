//! Version knowledge shared by the versions pane and both upgrades: parsing and ordering
//! versions, the Talos ↔ Kubernetes support matrix, valid upgrade paths and targets, skew
//! warnings, the releases learned at run time with their sources, and the explanations
//! behind each rule. Pure data and functions, no IO.

mod explain;
mod matrix;
mod path;
mod releases;
mod skew;
pub mod tables;
mod version;

pub use explain::VersionRule;
pub use matrix::{
    KubernetesRange, is_known_kubernetes_release, is_known_talos_release,
    known_kubernetes_releases, known_talos_releases, kubernetes_supported,
    latest_kubernetes_release, latest_talos_release, oldest_talos_minor_supporting,
    supported_kubernetes_range, talos_minor_support, talosctl_default_kubernetes,
};
pub use path::{
    PathError, Product, check_fleet_talos_path, check_fleet_talos_upgrade,
    check_fleet_talos_upgrade_among, check_kubernetes_path, check_kubernetes_supported,
    check_kubernetes_upgrade, check_talos_path, check_talos_upgrade, check_talos_upgrade_among,
    default_talos_target, fleet_talos_upgrade_targets, fleet_talos_upgrade_targets_among,
    kubernetes_upgrade_targets, talos_upgrade_targets, talos_upgrade_targets_among,
};
pub use releases::{OfferedRelease, ReleaseSource, TalosReleases};
pub use skew::{
    ControlPlaneComponent, NodeVersions, Severity, SkewWarning, max_kubelet_minors_behind,
    skew_warnings,
};
pub use version::{KubeVersion, Minor, TalosVersion, Version, VersionError};
