//! Built-in version tables: known stable Talos and Kubernetes releases, and the Talos support
//! matrix. Data only; every row says where it was read from upstream, so refreshing it for a new
//! release is a matter of re-reading those files (see each table's comment).

use super::version::Minor;

/// One Talos minor's row in the support matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TalosMinorSupport {
    pub talos: Minor,
    /// Oldest Kubernetes minor this Talos minor runs (upstream `MinimumKubernetesVersion`, x.y.0).
    pub kubernetes_oldest: Minor,
    /// Newest Kubernetes minor this Talos minor runs (upstream `MaximumKubernetesVersion`, x.y.99).
    pub kubernetes_newest: Minor,
    /// Oldest Talos version the installer of this minor accepts to upgrade from (upstream
    /// `MinimumHostUpgradeVersion`). taloscope's own rule — one minor at a time — is stricter.
    pub upgrade_from_oldest: Minor,
    /// A host on this minor or later cannot downgrade to this minor (upstream
    /// `MaximumHostDowngradeVersion`, exclusive).
    pub downgrade_from_below: Minor,
}

const fn row(talos: u32, k8s: (u32, u32), from: u32, down_below: u32) -> TalosMinorSupport {
    TalosMinorSupport {
        talos: Minor::new(1, talos),
        kubernetes_oldest: Minor::new(1, k8s.0),
        kubernetes_newest: Minor::new(1, k8s.1),
        upgrade_from_oldest: Minor::new(1, from),
        downgrade_from_below: Minor::new(1, down_below),
    }
}

/// From siderolabs/talos `pkg/machinery/compatibility/talosNNN/talosNNN.go` at main
/// (ad8823176e, 2026-08-21): Talos 1.2 to 1.15. Talos 1.14 and 1.15 are in the matrix before
/// they have a stable release; the release table below decides what can be a target.
pub const SUPPORT_MATRIX: &[TalosMinorSupport] = &[
    row(2, (23, 25), 0, 3),
    row(3, (24, 26), 0, 5),
    row(4, (25, 27), 0, 6),
    row(5, (26, 28), 2, 7),
    row(6, (24, 29), 3, 8),
    row(7, (25, 30), 4, 9),
    row(8, (26, 31), 5, 10),
    row(9, (27, 32), 8, 11),
    row(10, (28, 33), 8, 12),
    row(11, (29, 34), 9, 13),
    row(12, (30, 35), 10, 14),
    row(13, (31, 36), 11, 15),
    row(14, (32, 37), 12, 16),
    row(15, (33, 38), 13, 17),
];

/// A minor and the highest patch released for it. Talos and Kubernetes both number patches
/// without gaps, so every `x.y.0 ..= x.y.latest_patch` is a real release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleasedMinor {
    pub minor: Minor,
    pub latest_patch: u32,
}

const fn released(minor: u32, latest_patch: u32) -> ReleasedMinor {
    ReleasedMinor {
        minor: Minor::new(1, minor),
        latest_patch,
    }
}

/// Stable Talos releases, from the `vX.Y.Z` tags of siderolabs/talos (alpha, beta and rc tags
/// left out) as of 2026-08-21. Talos 1.14 has only pre-release tags, so it is not listed and is
/// never offered as a target.
pub const TALOS_RELEASES: &[ReleasedMinor] = &[
    released(0, 6),
    released(1, 2),
    released(2, 9),
    released(3, 7),
    released(4, 8),
    released(5, 6),
    released(6, 8),
    released(7, 7),
    released(8, 4),
    released(9, 6),
    released(10, 9),
    released(11, 6),
    released(12, 11),
    released(13, 9),
];

/// Kubernetes patch releases known to exist, for the minors the Talos matrix reaches in practice.
/// The highest patch per minor is the highest one siderolabs/talos itself ships or tests with:
/// `DefaultKubernetesVersion` in `pkg/machinery/constants/constants.go` on each release tag and
/// branch, and `KUBERNETES_VERSION` / `kubernetesVersion` in its CI workflows
/// (`.github/workflows/*.yaml`, `.kres.yaml`). Newer patches surely exist upstream; they are
/// left out rather than guessed.
pub const KUBERNETES_RELEASES: &[ReleasedMinor] = &[
    released(28, 5),  // CI: 1.28.5; default of Talos 1.5.x: up to 1.28.3
    released(29, 7),  // default of Talos 1.6.8
    released(30, 5),  // default of Talos 1.7.7
    released(31, 10), // CI: 1.31.10; default of Talos 1.8.4: 1.31.4
    released(32, 11), // CI on release-1.13: 1.32.11; default of Talos 1.9.6: 1.32.4
    released(33, 7),  // CI: 1.33.7; default of Talos 1.10.9: 1.33.6
    released(34, 3),  // CI: 1.34.3; default of Talos 1.11.x: 1.34.1
    released(35, 4),  // default of Talos 1.12.7 and later
    released(36, 3),  // default of Talos 1.13.9
    // Unsure: Talos main (1.14 pre-releases) defaults to 1.37.0-rc.1, and no upstream file
    // confirms the final 1.37.0. Listed as x.y.0 only, so Talos 1.14 fleets get a target.
    released(37, 0),
];

/// The Kubernetes version talosctl generates configs with: `DefaultKubernetesVersion` in
/// siderolabs/talos `pkg/machinery/constants/constants.go`, read at every stable tag of
/// v1.9.0 to v1.13.9. A row holds from its Talos patch until the next row of the same minor;
/// a newer patch than the table's last keeps the last row's default. Talos 1.14 has only the
/// `v1.14.0-rc.1` tag, whose default is the release candidate `1.37.0-rc.0`: its row names
/// that minor's release, 1.37.0, since a stable Talos never defaults to a pre-release.
pub const DEFAULT_KUBERNETES: &[TalosctlDefault] = &[
    default_kube(9, 0, 32, 0),
    default_kube(9, 3, 32, 1),
    default_kube(9, 4, 32, 2),
    default_kube(9, 5, 32, 3),
    default_kube(9, 6, 32, 4),
    default_kube(10, 0, 33, 0),
    default_kube(10, 3, 33, 1),
    default_kube(10, 5, 33, 2),
    default_kube(10, 6, 33, 3),
    default_kube(10, 7, 33, 4),
    default_kube(10, 8, 33, 6),
    default_kube(11, 0, 34, 0),
    default_kube(11, 2, 34, 1),
    default_kube(12, 0, 35, 0),
    default_kube(12, 5, 35, 2),
    default_kube(12, 7, 35, 4),
    default_kube(13, 0, 36, 0),
    default_kube(13, 3, 36, 1),
    default_kube(13, 5, 36, 2),
    default_kube(13, 9, 36, 3),
    default_kube(14, 0, 37, 0),
];

/// One row of [`DEFAULT_KUBERNETES`]: from Talos `1.talos.from_patch` on, talosctl defaults to
/// Kubernetes `1.kube.0`-`1.kube.kube_patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TalosctlDefault {
    pub talos: Minor,
    pub from_patch: u32,
    pub kubernetes: Minor,
    pub kubernetes_patch: u32,
}

const fn default_kube(talos: u32, from_patch: u32, kube: u32, kube_patch: u32) -> TalosctlDefault {
    TalosctlDefault {
        talos: Minor::new(1, talos),
        from_patch,
        kubernetes: Minor::new(1, kube),
        kubernetes_patch: kube_patch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_rows_are_ordered_and_consistent() {
        for pair in SUPPORT_MATRIX.windows(2) {
            assert_eq!(
                pair[0].talos.next(),
                pair[1].talos,
                "no Talos minor missing"
            );
        }
        for entry in SUPPORT_MATRIX {
            assert!(entry.kubernetes_oldest <= entry.kubernetes_newest);
            assert!(entry.upgrade_from_oldest < entry.talos);
            assert!(entry.downgrade_from_below > entry.talos);
        }
    }

    #[test]
    fn release_tables_are_ordered_without_gaps() {
        for table in [TALOS_RELEASES, KUBERNETES_RELEASES] {
            for pair in table.windows(2) {
                assert_eq!(pair[0].minor.next(), pair[1].minor);
            }
        }
    }

    #[test]
    fn talosctl_defaults_are_ordered_supported_and_known() {
        for pair in DEFAULT_KUBERNETES.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(
                (a.talos, a.from_patch) < (b.talos, b.from_patch),
                "{a:?} before {b:?}"
            );
        }
        for row in DEFAULT_KUBERNETES {
            let support = SUPPORT_MATRIX
                .iter()
                .find(|m| m.talos == row.talos)
                .unwrap();
            assert_eq!(
                support.kubernetes_newest, row.kubernetes,
                "talosctl defaults to its newest supported minor"
            );
            let known = KUBERNETES_RELEASES
                .iter()
                .find(|k| k.minor == row.kubernetes)
                .unwrap();
            assert!(row.kubernetes_patch <= known.latest_patch, "{row:?}");
        }
    }

    #[test]
    fn each_stable_talos_minor_from_1_2_has_a_matrix_row() {
        for release in TALOS_RELEASES
            .iter()
            .filter(|r| r.minor >= Minor::new(1, 2))
        {
            assert!(
                SUPPORT_MATRIX.iter().any(|row| row.talos == release.minor),
                "Talos {} has no matrix row",
                release.minor
            );
        }
    }
}
