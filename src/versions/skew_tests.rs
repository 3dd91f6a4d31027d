//! Unit tests for the skew warnings in `skew.rs`.

use super::*;

fn v(text: &str) -> Version {
    Version::parse(text).expect("test version parses")
}

fn control_plane_node(name: &str, talos: &str, kube: &str) -> NodeVersions {
    NodeVersions {
        node: name.into(),
        talos: Some(v(talos)),
        kubelet: Some(v(kube)),
        control_plane: ControlPlaneComponent::ALL
            .iter()
            .map(|c| (*c, v(kube)))
            .collect(),
    }
}

fn worker(name: &str, talos: &str, kubelet: &str) -> NodeVersions {
    NodeVersions {
        node: name.into(),
        talos: Some(v(talos)),
        kubelet: Some(v(kubelet)),
        control_plane: Vec::new(),
    }
}

/// The `healthy` scenario: three control planes and two workers on Talos v1.11.3 / Kubernetes v1.34.1.
fn healthy() -> Vec<NodeVersions> {
    vec![
        control_plane_node("cp1", "v1.11.3", "v1.34.1"),
        control_plane_node("cp2", "v1.11.3", "v1.34.1"),
        control_plane_node("cp3", "v1.11.3", "v1.34.1"),
        worker("w1", "v1.11.3", "v1.34.1"),
        worker("w2", "v1.11.3", "v1.34.1"),
    ]
}

fn rules(warnings: &[SkewWarning]) -> Vec<(VersionRule, Severity)> {
    warnings.iter().map(|w| (w.rule, w.severity)).collect()
}

/// The warning of `rule`; fails the test when there is none.
fn warning(warnings: &[SkewWarning], rule: VersionRule) -> &SkewWarning {
    warnings
        .iter()
        .find(|w| w.rule == rule)
        .unwrap_or_else(|| panic!("no {rule:?} warning in {warnings:#?}"))
}

#[test]
fn healthy_cluster_has_no_warnings() {
    assert_eq!(skew_warnings(&healthy()), []);
    assert_eq!(skew_warnings(&[]), []);
}

#[test]
fn older_talos_node_warns_and_its_matrix_breaks() {
    let mut nodes = healthy();
    nodes[4] = worker("w2", "v1.10.9", "v1.34.1");
    let warnings = skew_warnings(&nodes);
    assert_eq!(
        rules(&warnings),
        [
            (VersionRule::SupportMatrix, Severity::Error),
            (VersionRule::TalosMinorsDiffer, Severity::Warn),
        ]
    );
    assert_eq!(
        warnings[1].message,
        "nodes on different Talos minors: v1.10.9 on w2; v1.11.3 on cp1, cp2, cp3 +1 more"
    );
    assert_eq!(warnings[1].nodes.len(), 5);
    assert_eq!(
        warnings[0].message,
        "Talos v1.10.9 on w2 does not support Kubernetes v1.34.1 (it runs Kubernetes 1.28-1.33)"
    );
    assert_eq!(warnings[0].nodes, ["w2"]);
}

#[test]
fn talos_two_minors_apart_is_an_error() {
    let mut nodes = healthy();
    nodes[3] = worker("w1", "v1.9.6", "v1.32.4");
    let warnings = skew_warnings(&nodes);
    let talos = warning(&warnings, VersionRule::TalosMinorsDiffer);
    assert_eq!(talos.severity, Severity::Error);
}

#[test]
fn same_minor_different_patches_is_quiet() {
    let mut nodes = healthy();
    nodes[3] = worker("w1", "v1.11.6", "v1.34.1");
    nodes[4] = worker("w2", "v1.11.0-rc.0", "v1.34.1");
    assert_eq!(skew_warnings(&nodes), []);
}

#[test]
fn kubelet_newer_than_apiserver() {
    let mut nodes = healthy();
    nodes[3] = worker("w1", "v1.12.0", "v1.35.0");
    let warnings = skew_warnings(&nodes);
    let newer = warning(&warnings, VersionRule::KubeletNewerThanApiServer);
    assert_eq!(newer.severity, Severity::Error);
    assert_eq!(
        newer.message,
        "kubelet v1.35.0 on w1 is newer than kube-apiserver v1.34.1"
    );
    // A newer patch of the same minor is within policy.
    let mut nodes = healthy();
    nodes[3] = worker("w1", "v1.11.3", "v1.34.3");
    assert_eq!(skew_warnings(&nodes), []);
}

#[test]
fn kubelet_three_minors_behind_is_allowed_four_is_not() {
    let mut nodes = healthy();
    nodes[3] = worker("w1", "v1.11.3", "v1.31.4");
    let warnings = skew_warnings(&nodes);
    assert_eq!(
        warnings,
        [],
        "three behind is within policy; Talos 1.11 runs 1.29-1.34"
    );

    nodes[3] = worker("w1", "v1.10.9", "v1.30.5");
    nodes[4] = worker("w2", "v1.10.9", "v1.30.5");
    let warnings = skew_warnings(&nodes);
    let old = warning(&warnings, VersionRule::KubeletTooOld);
    assert_eq!(
        old.message,
        "kubelet v1.30.5 on w1, w2 is 4 minors behind kube-apiserver v1.34.1 (at most 3 allowed)"
    );
    assert_eq!(old.nodes, ["w1", "w2"]);
}

#[test]
fn kubelet_skew_was_two_minors_before_1_28() {
    assert_eq!(max_kubelet_minors_behind(Minor::new(1, 27)), 2);
    assert_eq!(max_kubelet_minors_behind(Minor::new(1, 28)), 3);
    let nodes = vec![
        control_plane_node("cp1", "v1.4.8", "v1.27.3"),
        worker("w1", "v1.4.8", "v1.24.0"),
    ];
    let warnings = skew_warnings(&nodes);
    let old = warning(&warnings, VersionRule::KubeletTooOld);
    assert!(
        old.message.contains("3 minors behind") && old.message.contains("at most 2"),
        "{}",
        old.message
    );
}

#[test]
fn mid_upgrade_control_plane_is_a_warning() {
    let mut nodes = healthy();
    nodes[0].control_plane[0] = (ControlPlaneComponent::ApiServer, v("v1.35.0"));
    nodes[0].talos = Some(v("v1.12.0"));
    nodes[1].talos = Some(v("v1.12.0"));
    nodes[2].talos = Some(v("v1.12.0"));
    nodes[3].talos = Some(v("v1.12.0"));
    nodes[4].talos = Some(v("v1.12.0"));
    let warnings = skew_warnings(&nodes);
    assert_eq!(
        rules(&warnings),
        [(VersionRule::ControlPlaneSkew, Severity::Warn)]
    );
    assert_eq!(
        warnings[0].message,
        "kube-apiserver on mixed versions: v1.34.1 on cp2, cp3; v1.35.0 on cp1"
    );
}

#[test]
fn components_uniform_but_different_is_a_warning() {
    let nodes: Vec<NodeVersions> = ["cp1", "cp2"]
        .into_iter()
        .map(|name| NodeVersions {
            node: name.into(),
            talos: Some(v("v1.12.0")),
            kubelet: Some(v("v1.34.1")),
            control_plane: vec![
                (ControlPlaneComponent::ApiServer, v("v1.35.0")),
                (ControlPlaneComponent::ControllerManager, v("v1.35.0")),
                (ControlPlaneComponent::Scheduler, v("v1.34.1")),
            ],
        })
        .collect();
    let warnings = skew_warnings(&nodes);
    assert_eq!(
        rules(&warnings),
        [(VersionRule::ControlPlaneSkew, Severity::Warn)]
    );
    assert_eq!(
        warnings[0].message,
        "control-plane components on different versions: kube-apiserver v1.35.0, \
         kube-controller-manager v1.35.0, kube-scheduler v1.34.1"
    );
    assert_eq!(warnings[0].nodes, ["cp1", "cp2"]);
}

#[test]
fn scheduler_newer_than_apiserver_is_an_error() {
    let mut nodes = healthy();
    for node in nodes.iter_mut().take(3) {
        node.talos = Some(v("v1.12.0"));
        node.control_plane[2] = (ControlPlaneComponent::Scheduler, v("v1.35.0"));
    }
    let warnings = skew_warnings(&nodes);
    let error = warnings
        .iter()
        .find(|w| w.severity == Severity::Error)
        .expect("scheduler ahead");
    assert_eq!(error.rule, VersionRule::ControlPlaneSkew);
    assert_eq!(
        error.message,
        "kube-scheduler v1.35.0 on cp1, cp2, cp3 is newer than kube-apiserver v1.34.1"
    );
    assert_eq!(warnings[0], *error, "errors sort first");
}

#[test]
fn apiservers_two_minors_apart_is_an_error() {
    let nodes = vec![
        control_plane_node("cp1", "v1.12.0", "v1.33.4"),
        control_plane_node("cp2", "v1.12.0", "v1.35.0"),
    ];
    let warnings = skew_warnings(&nodes);
    assert!(
        warnings.iter().any(|w| w.severity == Severity::Error
            && w.message == "kube-apiserver instances span v1.33.4 to v1.35.0; they must be within one minor"),
        "{warnings:#?}"
    );
}

#[test]
fn talos_outside_the_matrix_is_a_warning() {
    let nodes = vec![
        worker("w1", "v1.16.0", "v1.37.0"),
        worker("w2", "v1.16.0", "v1.37.0"),
    ];
    let warnings = skew_warnings(&nodes);
    assert_eq!(
        rules(&warnings),
        [(VersionRule::SupportMatrix, Severity::Warn)]
    );
    assert!(
        warnings[0]
            .message
            .starts_with("Talos v1.16.0 on w1, w2 is not in the built-in support matrix")
    );
}

#[test]
fn missing_data_is_skipped_not_guessed() {
    let nodes = vec![
        NodeVersions {
            node: "cp1".into(),
            ..NodeVersions::default()
        },
        worker("w1", "v1.11.3", "v1.34.1"),
        NodeVersions {
            node: "w2".into(),
            talos: Some(v("v1.11.3")),
            ..NodeVersions::default()
        },
    ];
    // No apiserver reported: kubelet rules cannot apply; nothing else disagrees.
    assert_eq!(skew_warnings(&nodes), []);
}

#[test]
fn large_fleets_stay_on_one_line() {
    let mut nodes = healthy();
    nodes.extend((0..250).map(|i| worker(&format!("w{i:03}"), "v1.11.3", "v1.28.0")));
    let warnings = skew_warnings(&nodes);
    let old = warning(&warnings, VersionRule::KubeletTooOld);
    assert_eq!(old.nodes.len(), 250);
    assert!(
        old.message.contains("w000, w001, w002 +247 more"),
        "{}",
        old.message
    );
    assert!(warnings.iter().all(|w| !w.message.contains('\n')));
    assert_eq!(
        warnings
            .iter()
            .filter(|w| w.rule == VersionRule::SupportMatrix)
            .count(),
        1,
        "one line per (Talos, Kubernetes) pair, not per node"
    );
}
