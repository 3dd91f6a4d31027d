//! Unit tests for the upgrade paths in `path.rs`.

use super::*;

fn v(text: &str) -> Version {
    Version::parse(text).expect("test version parses")
}

fn names(list: &[Version]) -> Vec<String> {
    list.iter().map(ToString::to_string).collect()
}

#[test]
fn talos_targets_from_scenario_version() {
    let targets = talos_upgrade_targets(&v("v1.11.3"), false);
    assert_eq!(
        names(&targets),
        ["v1.11.4", "v1.11.5", "v1.11.6", "v1.12.11"]
    );
}

#[test]
fn the_default_talos_target_is_the_running_minors_newest_patch_then_the_next_minor() {
    let running = [v("v1.11.3"), v("v1.11.5")];
    let targets = fleet_talos_upgrade_targets(&running, false);
    assert_eq!(
        default_talos_target(&targets, &running),
        Some(v("v1.11.6")),
        "not the minor jump to v1.12.11 offered beside it"
    );
    let on_newest_patch = [v("v1.10.9")];
    let targets = fleet_talos_upgrade_targets(&on_newest_patch, false);
    assert_eq!(
        default_talos_target(&targets, &on_newest_patch),
        Some(v("v1.11.6"))
    );
    let downgrades = [v("v1.11.2"), v("v1.10.9")];
    assert_eq!(
        default_talos_target(&downgrades, &[v("v1.11.3")]),
        None,
        "never a downgrade"
    );
    assert_eq!(default_talos_target(&[v("v1.12.0")], &[]), None);
}

#[test]
fn talos_targets_from_latest_patch_offer_only_next_minor() {
    assert_eq!(
        names(&talos_upgrade_targets(&v("v1.10.9"), false)),
        ["v1.11.6"]
    );
}

#[test]
fn talos_targets_on_newest_known_minor_are_its_later_patches() {
    assert_eq!(
        names(&talos_upgrade_targets(&v("v1.13.7"), false)),
        ["v1.13.8", "v1.13.9"]
    );
    assert!(
        talos_upgrade_targets(&v("v1.13.9"), false).is_empty(),
        "1.14 not released"
    );
}

#[test]
fn talos_targets_from_pre_release_include_the_release() {
    let targets = talos_upgrade_targets(&v("v1.13.0-beta.1"), false);
    assert_eq!(targets.first(), Some(&v("v1.13.0")));
    assert_eq!(targets.last(), Some(&v("v1.13.9")));
    assert_eq!(targets.len(), 10);
}

#[test]
fn talos_targets_with_downgrade() {
    let targets = talos_upgrade_targets(&v("v1.11.3"), true);
    assert_eq!(
        names(&targets),
        [
            "v1.10.9", "v1.11.0", "v1.11.1", "v1.11.2", "v1.11.4", "v1.11.5", "v1.11.6", "v1.12.11"
        ]
    );
}

#[test]
fn talos_targets_from_unknown_future_version_are_empty() {
    assert!(talos_upgrade_targets(&v("v1.16.0"), false).is_empty());
    assert!(talos_upgrade_targets(&v("v2.0.0"), true).is_empty());
}

#[test]
fn talos_next_minor_any_known_patch_is_allowed() {
    // issue 6: `--to v1.12.0` from v1.11.3 passes, though the menu offers the latest patch.
    assert_eq!(
        check_talos_upgrade(&v("v1.11.3"), &v("v1.12.0"), false),
        Ok(())
    );
    assert_eq!(
        check_talos_upgrade(&v("v1.11.3"), &v("v1.11.6"), false),
        Ok(())
    );
}

#[test]
fn talos_skipped_minor_refused_naming_both_versions() {
    let err = check_talos_upgrade(&v("v1.11.3"), &v("v1.13.0"), false).expect_err("skips 1.12");
    assert_eq!(
        err,
        PathError::SkippedMinor {
            product: Product::Talos,
            from: v("v1.11.3"),
            to: v("v1.13.0"),
            through: Minor::new(1, 12),
        }
    );
    let line = err.to_string();
    assert!(
        line.contains("v1.11.3") && line.contains("v1.13.0") && line.contains("1.12"),
        "{line}"
    );
    assert!(!line.contains('\n'));
    assert_eq!(err.rule(), VersionRule::TalosOneMinorAtATime);
}

#[test]
fn talos_downgrade_needs_asking() {
    let err = check_talos_upgrade(&v("v1.11.3"), &v("v1.11.1"), false).expect_err("downgrade");
    assert!(matches!(err, PathError::DowngradeNotAsked { .. }));
    assert!(err.to_string().contains("v1.11.3 -> v1.11.1"), "{err}");
    assert_eq!(err.rule(), VersionRule::TalosDowngrade);
    assert_eq!(
        check_talos_upgrade(&v("v1.11.3"), &v("v1.11.1"), true),
        Ok(())
    );
    assert_eq!(
        check_talos_upgrade(&v("v1.11.3"), &v("v1.10.2"), true),
        Ok(())
    );
    assert!(matches!(
        check_talos_upgrade(&v("v1.11.3"), &v("v1.9.6"), true),
        Err(PathError::SkippedMinor { through, .. }) if through == Minor::new(1, 10)
    ));
}

#[test]
fn talos_downgrade_the_installer_refuses() {
    // Upstream: Talos 1.2's installer refuses hosts on 1.3 or later.
    let err = check_talos_upgrade(&v("v1.3.7"), &v("v1.2.9"), true).expect_err("installer ceiling");
    assert!(matches!(err, PathError::InstallerRefuses { .. }), "{err}");
}

#[test]
fn talos_unknown_or_same_target_refused() {
    for (to, want) in [
        ("v1.12.12", "not a known release"),
        ("v1.14.0", "not a known release"),
    ] {
        let err = check_talos_upgrade(&v("v1.11.3"), &v(to), false).expect_err(to);
        assert!(
            err.to_string().contains(want) && err.to_string().contains(to),
            "{err}"
        );
    }
    let err =
        check_talos_upgrade(&v("v1.13.0-beta.1"), &v("v1.13.0-rc.0"), false).expect_err("pre");
    assert!(matches!(err, PathError::UnknownRelease { .. }));
    let err = check_talos_upgrade(&v("v1.11.3"), &v("v1.11.3"), false).expect_err("same");
    assert!(matches!(err, PathError::AlreadyRunning { .. }));
}

#[test]
fn talos_target_before_the_matrix_refused() {
    let err = check_talos_upgrade(&v("v1.0.6"), &v("v1.1.2"), false).expect_err("1.1 has no row");
    assert!(matches!(err, PathError::TalosNotInMatrix { minor, .. } if minor == Minor::new(1, 1)));
    assert_eq!(
        check_talos_upgrade(&v("v1.1.2"), &v("v1.2.0"), false),
        Ok(())
    );
}

#[test]
fn mixed_fleet_plans_from_the_lowest_node() {
    let fleet = [v("v1.11.3"), v("v1.11.3"), v("v1.10.7"), v("v1.11.3")];
    // From 1.10.7: 1.10.8, 1.10.9 would downgrade the 1.11.3 nodes, so only 1.11.6 is left.
    assert_eq!(
        names(&fleet_talos_upgrade_targets(&fleet, false)),
        ["v1.11.6"]
    );
    assert_eq!(
        check_fleet_talos_upgrade(&fleet, &v("v1.11.6"), false),
        Ok(())
    );
    let err =
        check_fleet_talos_upgrade(&fleet, &v("v1.12.11"), false).expect_err("1.10 node skips");
    assert!(
        err.to_string().contains("v1.10.7"),
        "names the lowest node's version: {err}"
    );
    let err = check_fleet_talos_upgrade(&fleet, &v("v1.10.9"), false).expect_err("downgrade");
    assert!(matches!(err, PathError::DowngradeNotAsked { .. }));
}

#[test]
fn mixed_fleet_partly_on_target_is_fine() {
    let fleet = [v("v1.11.6"), v("v1.11.3")];
    assert_eq!(
        check_fleet_talos_upgrade(&fleet, &v("v1.11.6"), false),
        Ok(())
    );
    assert!(fleet_talos_upgrade_targets(&fleet, false).contains(&v("v1.11.6")));
    let done = [v("v1.11.6"), v("v1.11.6")];
    assert!(matches!(
        check_fleet_talos_upgrade(&done, &v("v1.11.6"), false),
        Err(PathError::AlreadyRunning { .. })
    ));
    assert_eq!(
        check_fleet_talos_upgrade(&[], &v("v1.11.6"), false),
        Err(PathError::NoTalosVersions)
    );
    assert!(fleet_talos_upgrade_targets(&[], false).is_empty());
}

#[test]
fn kubernetes_next_minor_allowed_on_supporting_talos() {
    // issue 8: 1.34.1 -> 1.35.0 once Talos runs 1.12.
    assert_eq!(
        check_kubernetes_upgrade(&v("1.34.1"), &v("1.35.0"), &[v("v1.12.0")]),
        Ok(())
    );
    assert_eq!(
        check_kubernetes_upgrade(&v("v1.34.1"), &v("v1.34.3"), &[v("v1.11.3")]),
        Ok(())
    );
}

#[test]
fn kubernetes_target_beyond_talos_support_refused() {
    // The scenario cluster: Talos v1.11.3 runs at most Kubernetes 1.34.
    let err =
        check_kubernetes_upgrade(&v("1.34.1"), &v("1.35.0"), &[v("v1.11.3")]).expect_err("1.11");
    assert!(matches!(err, PathError::KubernetesNotSupported { .. }));
    let line = err.to_string();
    assert!(
        line.contains("v1.35.0") && line.contains("v1.11.3") && line.contains("1.29-1.34"),
        "{line}"
    );
    assert_eq!(err.rule(), VersionRule::SupportMatrix);
}

#[test]
fn kubernetes_skipped_minor_refused() {
    let err =
        check_kubernetes_upgrade(&v("1.34.1"), &v("1.36.0"), &[v("v1.13.0")]).expect_err("skip");
    assert_eq!(
        err,
        PathError::SkippedMinor {
            product: Product::Kubernetes,
            from: v("1.34.1"),
            to: v("1.36.0"),
            through: Minor::new(1, 35),
        }
    );
    assert!(err.to_string().contains("v1.34.1 -> v1.36.0"), "{err}");
    assert_eq!(err.rule(), VersionRule::KubernetesOneMinorAtATime);
}

#[test]
fn kubernetes_downgrade_unknown_and_same_refused() {
    let talos = [v("v1.12.4")];
    assert!(matches!(
        check_kubernetes_upgrade(&v("1.35.2"), &v("1.35.0"), &talos),
        Err(PathError::KubernetesDowngrade { .. })
    ));
    assert!(matches!(
        check_kubernetes_upgrade(&v("1.35.2"), &v("1.35.9"), &talos),
        Err(PathError::UnknownRelease { .. })
    ));
    assert!(matches!(
        check_kubernetes_upgrade(&v("1.35.2"), &v("1.35.2"), &talos),
        Err(PathError::AlreadyRunning { .. })
    ));
    assert_eq!(
        check_kubernetes_upgrade(&v("1.34.1"), &v("1.35.0"), &[]),
        Err(PathError::NoTalosVersions)
    );
}

#[test]
fn kubernetes_mixed_fleet_limited_by_lowest_and_highest_talos() {
    // A node still on Talos 1.11 caps Kubernetes at 1.34.
    let fleet = [v("v1.12.0"), v("v1.11.3"), v("v1.12.0")];
    let err =
        check_kubernetes_upgrade(&v("1.34.1"), &v("1.35.0"), &fleet).expect_err("lowest caps");
    assert!(err.to_string().contains("v1.11.3"), "{err}");
    // A node on Talos 1.15 (not yet released) would not run Kubernetes 1.32.
    let err = check_kubernetes_upgrade(
        &v("1.31.4"),
        &v("1.32.0"),
        &[v("v1.10.0"), v("v1.15.0-alpha.0")],
    )
    .expect_err("highest raises the floor");
    assert!(err.to_string().contains("v1.15.0-alpha.0"), "{err}");
}

#[test]
fn kubernetes_targets_from_scenario() {
    let on_1_11 = kubernetes_upgrade_targets(&v("v1.34.1"), &[v("v1.11.3")]);
    assert_eq!(names(&on_1_11), ["v1.34.2", "v1.34.3"]);
    let on_1_12 = kubernetes_upgrade_targets(&v("v1.34.1"), &[v("v1.12.0"), v("v1.12.11")]);
    assert_eq!(
        names(&on_1_12),
        [
            "v1.34.2", "v1.34.3", "v1.35.0", "v1.35.1", "v1.35.2", "v1.35.3", "v1.35.4"
        ]
    );
    assert!(!on_1_12.contains(&v("1.36.0")));
}

#[test]
fn kubernetes_targets_from_pre_release_and_unknown_talos() {
    let targets = kubernetes_upgrade_targets(&v("1.37.0-rc.1"), &[v("v1.14.0-beta.1")]);
    assert_eq!(names(&targets), ["v1.37.0"]);
    assert!(kubernetes_upgrade_targets(&v("1.34.1"), &[v("v1.16.0")]).is_empty());
    assert!(kubernetes_upgrade_targets(&v("1.34.1"), &[]).is_empty());
}

#[test]
fn kubernetes_supported_reasons() {
    assert_eq!(
        check_kubernetes_supported(&v("v1.11.3"), &v("1.34.1")),
        Ok(())
    );
    let err =
        check_kubernetes_supported(&v("v1.12.0"), &v("1.29.5")).expect_err("too old for 1.12");
    assert!(err.to_string().contains("1.30-1.35"), "{err}");
    let err = check_kubernetes_supported(&v("v1.16.0"), &v("1.36.0")).expect_err("unknown");
    assert!(matches!(err, PathError::TalosUnknownToMatrix { .. }));
    assert_eq!(err.rule(), VersionRule::SupportMatrix);
}
