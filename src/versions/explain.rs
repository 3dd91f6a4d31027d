//! The rules behind every version verdict, each with a short explanation for the UI's `?`, so
//! a plan or a skew warning doubles as a walkthrough for engineers new to Talos.

use serde::Serialize;

/// A rule of version knowledge that a path refusal or a skew warning comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum VersionRule {
    /// Talos upgrades go through each minor in turn.
    TalosOneMinorAtATime,
    /// Downgrades only when asked for.
    TalosDowngrade,
    /// Kubernetes upgrades: same minor or the next one.
    KubernetesOneMinorAtATime,
    /// Targets come from the built-in tables of real releases.
    KnownReleases,
    /// Each Talos minor runs a fixed range of Kubernetes minors.
    SupportMatrix,
    /// All nodes of a cluster should run the same Talos minor.
    TalosMinorsDiffer,
    /// kubelet must not be newer than kube-apiserver.
    KubeletNewerThanApiServer,
    /// kubelet may lag kube-apiserver by a bounded number of minors.
    KubeletTooOld,
    /// Control-plane components should agree, and never lead kube-apiserver.
    ControlPlaneSkew,
}

impl VersionRule {
    pub const ALL: [VersionRule; 9] = [
        VersionRule::TalosOneMinorAtATime,
        VersionRule::TalosDowngrade,
        VersionRule::KubernetesOneMinorAtATime,
        VersionRule::KnownReleases,
        VersionRule::SupportMatrix,
        VersionRule::TalosMinorsDiffer,
        VersionRule::KubeletNewerThanApiServer,
        VersionRule::KubeletTooOld,
        VersionRule::ControlPlaneSkew,
    ];

    /// A few words naming the rule, for a list or a help title.
    pub fn title(self) -> &'static str {
        match self {
            VersionRule::TalosOneMinorAtATime => "Talos upgrades go one minor at a time",
            VersionRule::TalosDowngrade => "Talos downgrades only when asked for",
            VersionRule::KubernetesOneMinorAtATime => "Kubernetes upgrades go one minor at a time",
            VersionRule::KnownReleases => "targets are known releases",
            VersionRule::SupportMatrix => "Talos supports a range of Kubernetes versions",
            VersionRule::TalosMinorsDiffer => "nodes on different Talos minors",
            VersionRule::KubeletNewerThanApiServer => "kubelet newer than kube-apiserver",
            VersionRule::KubeletTooOld => "kubelet too far behind kube-apiserver",
            VersionRule::ControlPlaneSkew => "control-plane components on different versions",
        }
    }

    /// A short paragraph: what the rule checks and why it matters.
    pub fn explain(self) -> &'static str {
        match self {
            VersionRule::TalosOneMinorAtATime => {
                "Each Talos installer migrates partitions, machine config and on-disk state from \
                 a limited range of older releases (the Talos 1.13 installer refuses anything \
                 before 1.11), and Talos release notes and upgrade tests are written one minor \
                 at a time. taloscope keeps to the path that is tested: to the next minor, \
                 usually its latest patch, every node finished, and only then the minor after. \
                 Skipping a minor (1.11 straight to 1.13) leaves that path, so it is refused."
            }
            VersionRule::TalosDowngrade => {
                "Going back to an older Talos is possible but rarely intended: the older release \
                 may not understand state or config written by the newer one. taloscope only \
                 offers a downgrade when you ask for it, and then only within the same minor or \
                 one minor back."
            }
            VersionRule::KubernetesOneMinorAtATime => {
                "Kubernetes supports upgrading the control plane by one minor version at a time \
                 (1.34 to 1.35, not 1.34 to 1.36): stored objects, API versions and component \
                 flags are migrated across one release, and the version-skew policy only covers \
                 neighbouring minors. Patch upgrades within a minor are always fine. Downgrades \
                 are not supported."
            }
            VersionRule::KnownReleases => {
                "Targets come from built-in tables of stable releases (Talos release tags, \
                 Kubernetes patch releases Talos ships or tests), so a plan never points at an \
                 image that does not exist. Pre-releases are never offered as targets; an \
                 unknown version is refused rather than guessed."
            }
            VersionRule::SupportMatrix => {
                "Each Talos minor runs a fixed range of Kubernetes minors (Talos 1.11 runs \
                 Kubernetes 1.29 to 1.34): Talos renders the kubelet and control-plane \
                 configuration itself and is only tested against that range. Upgrading Talos \
                 past what the running Kubernetes supports, or Kubernetes past what the oldest \
                 Talos node supports, leaves nodes in an untested and often broken state: \
                 upgrade the other one first."
            }
            VersionRule::TalosMinorsDiffer => {
                "Nodes on different Talos minors are normal while a rolling upgrade is under \
                 way, but a cluster left that way runs two sets of behaviour and limits which \
                 Kubernetes versions can be used (the oldest node decides). More than one minor \
                 apart means a node was skipped; upgrade it before anything else."
            }
            VersionRule::KubeletNewerThanApiServer => {
                "The Kubernetes version-skew policy never allows a kubelet newer than \
                 kube-apiserver: the kubelet may use API fields and behaviour the server does \
                 not know yet. Upgrade the control plane first, then the kubelets."
            }
            VersionRule::KubeletTooOld => {
                "A kubelet may lag kube-apiserver by at most three minors (two before Kubernetes \
                 1.28). Beyond that the server may have removed APIs the kubelet still calls, \
                 and the node can stop reporting or running pods. Upgrade those kubelets before \
                 the next control-plane upgrade."
            }
            VersionRule::ControlPlaneSkew => {
                "During an upgrade control-plane components briefly differ, which is expected. \
                 Left that way, it breaks the version-skew policy's assumptions: \
                 kube-controller-manager and kube-scheduler must not be newer than any \
                 kube-apiserver and at most one minor older, and kube-apiserver instances must \
                 be within one minor of each other."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_title_and_a_paragraph() {
        for rule in VersionRule::ALL {
            assert!(!rule.title().is_empty());
            assert!(rule.explain().len() > 120, "{rule:?} explanation too short");
            assert!(
                !rule.explain().contains("  "),
                "{rule:?} has a double space"
            );
        }
    }
}
