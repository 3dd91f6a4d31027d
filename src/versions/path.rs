//! Upgrade paths: which Talos and Kubernetes targets are valid from the running versions, and a
//! one-line reason when a chosen target is not. Talos goes one minor at a time; Kubernetes moves
//! to a later patch or the next minor, within what every node's Talos supports.

use std::collections::BTreeSet;

use serde::Serialize;

use super::explain::VersionRule;
use super::matrix::{
    KubernetesRange, is_known_kubernetes_release, known_kubernetes_releases,
    supported_kubernetes_range, talos_minor_support,
};
use super::releases::TalosReleases;
use super::version::{KubeVersion, Minor, TalosVersion, Version};

/// What is being upgraded, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Product {
    Talos,
    Kubernetes,
}

impl std::fmt::Display for Product {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Product::Talos => "Talos",
            Product::Kubernetes => "Kubernetes",
        })
    }
}

/// Why an upgrade path is refused; every message is one line naming both versions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{product} {to} is not a known release; choose one of the offered targets")]
    UnknownRelease { product: Product, to: Version },
    #[error("{product} is already on {to}; nothing to upgrade")]
    AlreadyRunning { product: Product, to: Version },
    #[error("Talos {from} -> {to} is a downgrade; ask for a downgrade explicitly to allow it")]
    DowngradeNotAsked {
        from: TalosVersion,
        to: TalosVersion,
    },
    #[error("Kubernetes {from} -> {to} is a downgrade, which Kubernetes does not support")]
    KubernetesDowngrade { from: KubeVersion, to: KubeVersion },
    #[error("{product} {from} -> {to} skips a minor; go through {through} first")]
    SkippedMinor {
        product: Product,
        from: Version,
        to: Version,
        through: Minor,
    },
    #[error(
        "{product} {from} -> {to} changes major version, which the built-in tables do not cover"
    )]
    MajorChange {
        product: Product,
        from: Version,
        to: Version,
    },
    #[error(
        "Talos {from} -> {to} is refused by the Talos {to} installer, which does not accept {from} as a starting version"
    )]
    InstallerRefuses {
        from: TalosVersion,
        to: TalosVersion,
    },
    #[error("Talos {from} -> {to}: the support matrix has no row for Talos {minor}")]
    TalosNotInMatrix {
        from: TalosVersion,
        to: TalosVersion,
        minor: Minor,
    },
    #[error("Kubernetes {kube} is not supported by Talos {talos} (it runs Kubernetes {range})")]
    KubernetesNotSupported {
        kube: KubeVersion,
        talos: TalosVersion,
        range: KubernetesRange,
    },
    #[error("Kubernetes {kube} cannot be checked: the support matrix has no row for Talos {talos}")]
    TalosUnknownToMatrix {
        kube: KubeVersion,
        talos: TalosVersion,
    },
    #[error("no node reported a Talos version; cannot plan an upgrade")]
    NoTalosVersions,
}

impl PathError {
    /// The rule behind this refusal, for the UI's `?`.
    pub fn rule(&self) -> VersionRule {
        match self {
            PathError::UnknownRelease { .. }
            | PathError::AlreadyRunning { .. }
            | PathError::NoTalosVersions => VersionRule::KnownReleases,
            PathError::DowngradeNotAsked { .. } | PathError::InstallerRefuses { .. } => {
                VersionRule::TalosDowngrade
            }
            PathError::KubernetesDowngrade { .. } => VersionRule::KubernetesOneMinorAtATime,
            PathError::SkippedMinor { product, .. } | PathError::MajorChange { product, .. } => {
                match product {
                    Product::Talos => VersionRule::TalosOneMinorAtATime,
                    Product::Kubernetes => VersionRule::KubernetesOneMinorAtATime,
                }
            }
            PathError::TalosNotInMatrix { .. }
            | PathError::KubernetesNotSupported { .. }
            | PathError::TalosUnknownToMatrix { .. } => VersionRule::SupportMatrix,
        }
    }
}

/// One node's Talos `from` → `to`. Forward: a later patch of the same minor or any known patch of
/// the next minor. Backward (only with `allow_downgrade`): the same minor or one minor back.
/// Pre-release `from` versions count as below their release (`v1.13.0-beta.1` → `v1.13.0` is a
/// patch step).
pub fn check_talos_upgrade(
    from: &TalosVersion,
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    check_talos_upgrade_among(&TalosReleases::built_in(), from, to, allow_downgrade)
}

/// [`check_talos_upgrade`] with the releases learned at run time (a registry's tags, else the
/// built-in table): `to` must be one of `releases`.
pub fn check_talos_upgrade_among(
    releases: &TalosReleases,
    from: &TalosVersion,
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    if releases.source_of(to).is_none() {
        return Err(PathError::UnknownRelease {
            product: Product::Talos,
            to: to.clone(),
        });
    }
    check_talos_path(from, to, allow_downgrade)
}

/// The path rules of [`check_talos_upgrade`] alone, for a target whose being a release is
/// judged elsewhere (an unlisted release the operator acknowledged).
pub fn check_talos_path(
    from: &TalosVersion,
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    let product = Product::Talos;
    if to == from {
        return Err(PathError::AlreadyRunning {
            product,
            to: to.clone(),
        });
    }
    if from.major != to.major {
        return Err(PathError::MajorChange {
            product,
            from: from.clone(),
            to: to.clone(),
        });
    }
    let (from_minor, to_minor) = (from.minor_key(), to.minor_key());
    if to < from {
        if !allow_downgrade {
            return Err(PathError::DowngradeNotAsked {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if from_minor.minor - to_minor.minor > 1 {
            return Err(PathError::SkippedMinor {
                product,
                from: from.clone(),
                to: to.clone(),
                through: Minor::new(from.major, from.minor - 1),
            });
        }
    } else if to_minor.minor - from_minor.minor > 1 {
        return Err(PathError::SkippedMinor {
            product,
            from: from.clone(),
            to: to.clone(),
            through: from_minor.next(),
        });
    }
    // The target's installer has its own floor (upgrades) and ceiling (downgrades). One minor
    // forward is always above the floor, but one minor back can hit the ceiling (Talos 1.2
    // refuses hosts on 1.3); a target outside the matrix has no rule at all.
    let Some(row) = talos_minor_support(to_minor) else {
        return Err(PathError::TalosNotInMatrix {
            from: from.clone(),
            to: to.clone(),
            minor: to_minor,
        });
    };
    let upstream_allows = if to > from {
        from_minor >= row.upgrade_from_oldest
    } else {
        from_minor < row.downgrade_from_below
    };
    if !upstream_allows {
        return Err(PathError::InstallerRefuses {
            from: from.clone(),
            to: to.clone(),
        });
    }
    Ok(())
}

/// Valid Talos targets from one node's version, oldest first: later patches of its minor and the
/// latest patch of the next minor; with `allow_downgrade` also earlier patches of its minor and
/// the latest patch of the minor before.
pub fn talos_upgrade_targets(current: &TalosVersion, allow_downgrade: bool) -> Vec<TalosVersion> {
    talos_upgrade_targets_among(&TalosReleases::built_in(), current, allow_downgrade)
}

/// [`talos_upgrade_targets`] among the releases learned at run time.
pub fn talos_upgrade_targets_among(
    releases: &TalosReleases,
    current: &TalosVersion,
    allow_downgrade: bool,
) -> Vec<TalosVersion> {
    let minor = current.minor_key();
    let mut candidates: Vec<TalosVersion> = releases
        .versions()
        .filter(|release| release.minor_key() == minor)
        .cloned()
        .collect();
    candidates.extend(releases.latest_of(minor.next()).cloned());
    if allow_downgrade && minor.minor > 0 {
        candidates.extend(
            releases
                .latest_of(Minor::new(minor.major, minor.minor - 1))
                .cloned(),
        );
    }
    candidates
        .retain(|to| check_talos_upgrade_among(releases, current, to, allow_downgrade).is_ok());
    candidates.sort();
    candidates
}

/// A whole cluster to `to`: every node not already on `to` must be allowed to go there. Mixed
/// fleets are thereby planned from the lowest node.
pub fn check_fleet_talos_upgrade(
    nodes: &[TalosVersion],
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    check_fleet_talos_upgrade_among(&TalosReleases::built_in(), nodes, to, allow_downgrade)
}

/// [`check_fleet_talos_upgrade`] among the releases learned at run time.
pub fn check_fleet_talos_upgrade_among(
    releases: &TalosReleases,
    nodes: &[TalosVersion],
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    fleet_check(nodes, to, |node| {
        check_talos_upgrade_among(releases, node, to, allow_downgrade)
    })
}

/// The path rules of [`check_fleet_talos_upgrade`] alone (see [`check_talos_path`]).
pub fn check_fleet_talos_path(
    nodes: &[TalosVersion],
    to: &TalosVersion,
    allow_downgrade: bool,
) -> Result<(), PathError> {
    fleet_check(nodes, to, |node| {
        check_talos_path(node, to, allow_downgrade)
    })
}

fn fleet_check(
    nodes: &[TalosVersion],
    to: &TalosVersion,
    check: impl Fn(&TalosVersion) -> Result<(), PathError>,
) -> Result<(), PathError> {
    let distinct: BTreeSet<&TalosVersion> = nodes.iter().collect();
    if distinct.is_empty() {
        return Err(PathError::NoTalosVersions);
    }
    if distinct.iter().all(|node| *node == to) {
        return Err(PathError::AlreadyRunning {
            product: Product::Talos,
            to: to.clone(),
        });
    }
    distinct
        .into_iter()
        .filter(|node| *node != to)
        .try_for_each(check)
}

/// Valid Talos targets for a cluster: the targets from its lowest node that every other node may
/// also take (or already runs). Empty when no node reported a version.
pub fn fleet_talos_upgrade_targets(
    nodes: &[TalosVersion],
    allow_downgrade: bool,
) -> Vec<TalosVersion> {
    fleet_talos_upgrade_targets_among(&TalosReleases::built_in(), nodes, allow_downgrade)
}

/// [`fleet_talos_upgrade_targets`] among the releases learned at run time.
pub fn fleet_talos_upgrade_targets_among(
    releases: &TalosReleases,
    nodes: &[TalosVersion],
    allow_downgrade: bool,
) -> Vec<TalosVersion> {
    let Some(lowest) = Version::lowest(nodes) else {
        return Vec::new();
    };
    let mut targets = talos_upgrade_targets_among(releases, lowest, allow_downgrade);
    targets
        .retain(|to| check_fleet_talos_upgrade_among(releases, nodes, to, allow_downgrade).is_ok());
    targets
}

/// The target a Talos upgrade offers first: the newest of `targets` in the minor the lowest
/// node runs, else the newest of the next minor (a minor jump only once the running minor has
/// nothing newer). Never a downgrade; `None` when no target is above the lowest node. The CLI
/// and the console both default to it.
pub fn default_talos_target(
    targets: &[TalosVersion],
    running: &[TalosVersion],
) -> Option<TalosVersion> {
    let lowest = Version::lowest(running)?;
    let newest_of = |minor| {
        targets
            .iter()
            .filter(|t| *t > lowest && t.minor_key() == minor)
            .max()
            .cloned()
    };
    newest_of(lowest.minor_key()).or_else(|| newest_of(lowest.minor_key().next()))
}

/// Whether Talos `talos` runs Kubernetes `kube`, with the reason when not. Used both for a
/// Kubernetes target against each node's Talos, and for a Talos target against the running
/// Kubernetes.
pub fn check_kubernetes_supported(
    talos: &TalosVersion,
    kube: &KubeVersion,
) -> Result<(), PathError> {
    match supported_kubernetes_range(talos.minor_key()) {
        None => Err(PathError::TalosUnknownToMatrix {
            kube: kube.clone(),
            talos: talos.clone(),
        }),
        Some(range) if range.contains(kube) => Ok(()),
        Some(range) => Err(PathError::KubernetesNotSupported {
            kube: kube.clone(),
            talos: talos.clone(),
            range,
        }),
    }
}

/// Kubernetes `from` → `to` on a cluster whose nodes run `talos_versions`: a later patch of the
/// same minor or a known release of the next minor, supported by every node's Talos (the lowest
/// Talos caps the newest Kubernetes; the highest can raise the oldest).
pub fn check_kubernetes_upgrade(
    from: &KubeVersion,
    to: &KubeVersion,
    talos_versions: &[TalosVersion],
) -> Result<(), PathError> {
    if !is_known_kubernetes_release(to) {
        return Err(PathError::UnknownRelease {
            product: Product::Kubernetes,
            to: to.clone(),
        });
    }
    check_kubernetes_path(from, to, talos_versions)
}

/// [`check_kubernetes_upgrade`] for a `to` known to be a release by other means (a registry
/// lists its images): every rule but the built-in table's.
pub fn check_kubernetes_path(
    from: &KubeVersion,
    to: &KubeVersion,
    talos_versions: &[TalosVersion],
) -> Result<(), PathError> {
    let product = Product::Kubernetes;
    if to == from {
        return Err(PathError::AlreadyRunning {
            product,
            to: to.clone(),
        });
    }
    if to < from {
        return Err(PathError::KubernetesDowngrade {
            from: from.clone(),
            to: to.clone(),
        });
    }
    if from.major != to.major {
        return Err(PathError::MajorChange {
            product,
            from: from.clone(),
            to: to.clone(),
        });
    }
    if to.minor - from.minor > 1 {
        return Err(PathError::SkippedMinor {
            product,
            from: from.clone(),
            to: to.clone(),
            through: from.minor_key().next(),
        });
    }
    let distinct: BTreeSet<&TalosVersion> = talos_versions.iter().collect();
    if distinct.is_empty() {
        return Err(PathError::NoTalosVersions);
    }
    distinct
        .into_iter()
        .try_for_each(|talos| check_kubernetes_supported(talos, to))
}

/// Valid Kubernetes targets from `current` (the lowest control-plane component version), oldest
/// first: every known later patch of its minor and of the next minor that all nodes' Talos
/// versions support.
pub fn kubernetes_upgrade_targets(
    current: &KubeVersion,
    talos_versions: &[TalosVersion],
) -> Vec<KubeVersion> {
    known_kubernetes_releases()
        .into_iter()
        .filter(|to| check_kubernetes_upgrade(current, to, talos_versions).is_ok())
        .collect()
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
