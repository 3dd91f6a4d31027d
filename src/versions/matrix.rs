//! Questions answered from the built-in tables: which Kubernetes range a Talos minor runs, and
//! which Talos and Kubernetes releases are known to exist (so targets are real versions).

use std::fmt;

use serde::Serialize;

use super::tables::{
    DEFAULT_KUBERNETES, KUBERNETES_RELEASES, ReleasedMinor, SUPPORT_MATRIX, TALOS_RELEASES,
    TalosMinorSupport,
};
use super::version::{KubeVersion, Minor, TalosVersion, Version};

/// The Kubernetes minors one Talos minor supports, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KubernetesRange {
    pub oldest: Minor,
    pub newest: Minor,
}

impl KubernetesRange {
    /// By minor only, as upstream does (its maximum is `x.y.99`), so pre-releases of a
    /// supported minor count as supported.
    pub fn contains(&self, kube: &KubeVersion) -> bool {
        (self.oldest..=self.newest).contains(&kube.minor_key())
    }
}

impl fmt::Display for KubernetesRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.oldest, self.newest)
    }
}

/// The matrix row for a Talos minor, if the built-in matrix has one.
pub fn talos_minor_support(talos: Minor) -> Option<&'static TalosMinorSupport> {
    SUPPORT_MATRIX.iter().find(|row| row.talos == talos)
}

/// The Kubernetes range a Talos minor supports; `None` for minors outside the matrix.
pub fn supported_kubernetes_range(talos: Minor) -> Option<KubernetesRange> {
    talos_minor_support(talos).map(|row| KubernetesRange {
        oldest: row.kubernetes_oldest,
        newest: row.kubernetes_newest,
    })
}

/// Whether this Talos version runs this Kubernetes version. Unknown Talos minors are `false`:
/// nothing vouches for them.
pub fn kubernetes_supported(talos: &TalosVersion, kube: &KubeVersion) -> bool {
    supported_kubernetes_range(talos.minor_key()).is_some_and(|range| range.contains(kube))
}

/// The oldest Talos minor from `at_least` on that runs `kube`: where an OS upgrade has to go
/// before a Kubernetes upgrade to `kube` can.
pub fn oldest_talos_minor_supporting(kube: &KubeVersion, at_least: Minor) -> Option<Minor> {
    SUPPORT_MATRIX
        .iter()
        .filter(|row| row.talos >= at_least)
        .filter(|row| (row.kubernetes_oldest..=row.kubernetes_newest).contains(&kube.minor_key()))
        .map(|row| row.talos)
        .min()
}

fn expand(table: &[ReleasedMinor]) -> Vec<Version> {
    table
        .iter()
        .flat_map(|row| {
            (0..=row.latest_patch)
                .map(move |patch| Version::new(row.minor.major, row.minor.minor, patch))
        })
        .collect()
}

fn is_listed(table: &[ReleasedMinor], version: &Version) -> bool {
    version.pre.is_none()
        && table
            .iter()
            .any(|row| row.minor == version.minor_key() && version.patch <= row.latest_patch)
}

fn latest_in(table: &[ReleasedMinor], minor: Minor) -> Option<Version> {
    table
        .iter()
        .find(|row| row.minor == minor)
        .map(|row| Version::new(minor.major, minor.minor, row.latest_patch))
}

/// Every stable Talos release in the built-in table, oldest first.
pub fn known_talos_releases() -> Vec<TalosVersion> {
    expand(TALOS_RELEASES)
}

/// Whether `version` is a stable Talos release in the built-in table (pre-releases never are).
pub fn is_known_talos_release(version: &TalosVersion) -> bool {
    is_listed(TALOS_RELEASES, version)
}

/// The newest known patch of a Talos minor.
pub fn latest_talos_release(minor: Minor) -> Option<TalosVersion> {
    latest_in(TALOS_RELEASES, minor)
}

/// Every Kubernetes release in the built-in table, oldest first.
pub fn known_kubernetes_releases() -> Vec<KubeVersion> {
    expand(KUBERNETES_RELEASES)
}

/// Whether `version` is a Kubernetes release in the built-in table.
pub fn is_known_kubernetes_release(version: &KubeVersion) -> bool {
    is_listed(KUBERNETES_RELEASES, version)
}

/// The newest known patch of a Kubernetes minor.
pub fn latest_kubernetes_release(minor: Minor) -> Option<KubeVersion> {
    latest_in(KUBERNETES_RELEASES, minor)
}

/// The Kubernetes version talosctl of this Talos release generates configs with (its
/// `DefaultKubernetesVersion`); `None` for a Talos minor the table has no row for.
pub fn talosctl_default_kubernetes(talos: &TalosVersion) -> Option<KubeVersion> {
    DEFAULT_KUBERNETES
        .iter()
        .rfind(|row| row.talos == talos.minor_key() && row.from_patch <= talos.patch)
        .map(|row| {
            Version::new(
                row.kubernetes.major,
                row.kubernetes.minor,
                row.kubernetes_patch,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).expect("test version parses")
    }

    #[test]
    fn ranges_match_upstream_rows() {
        let r = supported_kubernetes_range(Minor::new(1, 11)).expect("1.11 in matrix");
        assert_eq!((r.oldest, r.newest), (Minor::new(1, 29), Minor::new(1, 34)));
        assert_eq!(r.to_string(), "1.29-1.34");
        let r = supported_kubernetes_range(Minor::new(1, 10)).expect("1.10 in matrix");
        assert_eq!(r.to_string(), "1.28-1.33");
        assert_eq!(
            supported_kubernetes_range(Minor::new(1, 12)).map(|r| r.to_string()),
            Some("1.30-1.35".into())
        );
        assert_eq!(supported_kubernetes_range(Minor::new(1, 1)), None);
        assert_eq!(supported_kubernetes_range(Minor::new(1, 16)), None);
        assert_eq!(supported_kubernetes_range(Minor::new(2, 0)), None);
    }

    #[test]
    fn scenario_support() {
        assert!(kubernetes_supported(&v("v1.11.3"), &v("v1.34.1")));
        assert!(!kubernetes_supported(&v("v1.11.3"), &v("1.35.0")));
        assert!(
            !kubernetes_supported(&v("v1.10.9"), &v("v1.34.1")),
            "1.10 stops at 1.33"
        );
        assert!(kubernetes_supported(&v("v1.12.0"), &v("1.35.0")));
        assert!(
            !kubernetes_supported(&v("v1.11.3"), &v("1.28.15")),
            "too old"
        );
        assert!(
            kubernetes_supported(&v("v1.11.3"), &v("1.29.0")),
            "lower bound included"
        );
    }

    #[test]
    fn pre_releases_use_their_minor() {
        assert!(kubernetes_supported(
            &v("v1.14.0-beta.1"),
            &v("1.37.0-rc.1")
        ));
        assert!(kubernetes_supported(&v("v1.13.0-beta.1"), &v("1.36.0")));
        assert!(!kubernetes_supported(
            &v("v1.13.0-beta.1"),
            &v("1.37.0-rc.1")
        ));
    }

    #[test]
    fn unknown_talos_minor_supports_nothing() {
        assert!(!kubernetes_supported(&v("v1.16.0"), &v("1.36.0")));
        assert!(!kubernetes_supported(&v("v0.14.3"), &v("1.22.0")));
    }

    #[test]
    fn known_talos_releases_are_stable_tags() {
        let all = known_talos_releases();
        assert!(all.contains(&v("v1.11.3")));
        assert!(all.contains(&v("v1.12.11")));
        assert!(!all.contains(&v("v1.12.12")));
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted");
        assert!(is_known_talos_release(&v("v1.13.0")));
        assert!(!is_known_talos_release(&v("v1.13.0-beta.1")));
        assert!(
            !is_known_talos_release(&v("v1.14.0")),
            "1.14 has no stable tag yet"
        );
        assert_eq!(latest_talos_release(Minor::new(1, 11)), Some(v("v1.11.6")));
        assert_eq!(latest_talos_release(Minor::new(1, 10)), Some(v("v1.10.9")));
        assert_eq!(latest_talos_release(Minor::new(1, 14)), None);
    }

    #[test]
    fn talosctl_defaults_follow_the_release_tags() {
        let default = |t: &str| talosctl_default_kubernetes(&v(t)).map(|k| k.to_string());
        assert_eq!(default("v1.9.0").as_deref(), Some("v1.32.0"));
        assert_eq!(default("v1.9.2").as_deref(), Some("v1.32.0"));
        assert_eq!(default("v1.9.6").as_deref(), Some("v1.32.4"));
        assert_eq!(default("v1.10.9").as_deref(), Some("v1.33.6"));
        assert_eq!(default("v1.11.1").as_deref(), Some("v1.34.0"));
        assert_eq!(default("v1.11.3").as_deref(), Some("v1.34.1"));
        assert_eq!(default("v1.12.6").as_deref(), Some("v1.35.2"));
        assert_eq!(default("v1.12.15").as_deref(), Some("v1.35.4"));
        assert_eq!(default("v1.13.9").as_deref(), Some("v1.36.3"));
        assert_eq!(default("v1.14.0").as_deref(), Some("v1.37.0"));
        assert_eq!(default("v1.8.4"), None);
        assert_eq!(default("v1.15.0"), None);
    }

    #[test]
    fn known_kubernetes_releases() {
        let all = super::known_kubernetes_releases();
        assert!(
            all.contains(&v("1.34.1")) && all.contains(&v("1.35.0")) && all.contains(&v("1.36.0"))
        );
        assert!(is_known_kubernetes_release(&v("v1.35.4")));
        assert!(
            !is_known_kubernetes_release(&v("v1.35.5")),
            "not seen upstream"
        );
        assert!(!is_known_kubernetes_release(&v("v1.37.0-rc.1")));
        assert!(!is_known_kubernetes_release(&v("v1.38.0")));
        assert_eq!(
            latest_kubernetes_release(Minor::new(1, 37)),
            Some(v("1.37.0"))
        );
    }
}
