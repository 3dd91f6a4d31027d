//! The guards of a create (the name free in both config files, the Talos/Kubernetes pair, an
//! odd control-plane count, the provider ready, how configs are delivered) and of a delete (no
//! rollout holding the cluster, VMs known, the destruction acknowledged). Pure: the CLI and the
//! console show the same lists.
use std::collections::BTreeSet;

use crate::guards::{Guard, GuardId};
use crate::provision::guards::EVEN_MEMBERS_ACK;
use crate::provision::room::{room_findings, room_guard};
use crate::upgrade::guards::LEASE_UNREAD_ACK;
use crate::versions::{
    KubeVersion, TalosVersion, kubernetes_supported, supported_kubernetes_range,
};

use super::plan::{CreatePlan, DeletePlan, Delivery, EndpointChoice, VmsKnownBy};

/// What the operator types to delete a cluster, besides its name.
pub const DESTROYS_ACK: &str = "this destroys the cluster and its data";

/// What the create guards look at, gathered by the caller.
#[derive(Debug, Clone)]
pub struct CreateFacts<'a> {
    pub plan: &'a CreatePlan,
    /// Context names in the talosconfig files.
    pub talos_contexts: &'a BTreeSet<String>,
    /// Context names in the kubeconfig files.
    pub kube_contexts: &'a BTreeSet<String>,
}

/// Every create guard, in [`GuardId::CREATE`] order.
pub fn create_guards(f: &CreateFacts<'_>) -> Vec<Guard> {
    vec![
        name_free(f),
        version_pair(&f.plan.talos, &f.plan.kubernetes),
        control_plane_count(f.plan.controlplanes),
        provider_ready(f.plan),
        config_delivery(f.plan),
    ]
}

/// The new contexts are merged under the cluster's name: neither file may have it already.
pub fn name_free(f: &CreateFacts<'_>) -> Guard {
    let id = GuardId::NameFree;
    let name = &f.plan.cluster;
    let taken: Vec<&str> = [
        (f.talos_contexts, "talosconfig"),
        (f.kube_contexts, "kubeconfig"),
    ]
    .into_iter()
    .filter(|(names, _)| names.contains(name))
    .map(|(_, file)| file)
    .collect();
    if taken.is_empty() {
        Guard::pass(id, format!("no context is named {name}"))
    } else {
        Guard::fail(
            id,
            format!(
                "a {} context is already named {name}: choose another name, or delete that cluster first",
                taken.join(" and a ")
            ),
        )
    }
}

/// The merge at the end of the run would succeed: what `check_merge` found in the files, or
/// why there are none to write into.
pub fn context_files(
    checked: Result<&crate::cluster_config::KubeNames, &str>,
    files: Option<&crate::cluster_config::ContextFiles>,
) -> Guard {
    let id = GuardId::ContextFiles;
    match (checked, files) {
        (Ok(names), Some(files)) => Guard::pass(
            id,
            crate::printable::line(&format!(
                "{} and {} can take them: kube context {}, cluster {}, user {}",
                files.talosconfig.display(),
                files.kubeconfig.display(),
                names.context,
                names.cluster,
                names.user
            )),
        ),
        (Ok(_), None) => Guard::fail(id, "no talosconfig or kubeconfig to write into"),
        (Err(why), _) => Guard::fail(id, crate::printable::line(why)),
    }
}

/// The name is not free either while a secrets bundle of it is left (a cluster deleted by
/// hand, its keys still valid for its admin certificates) and no create journal of it would
/// resume with it: a new cluster never takes another's keys, unless the operator names that
/// very bundle with `--with-secrets` (`with_secrets`).
pub fn bundle_free(
    name_free: Guard,
    bundle: &std::path::Path,
    resumed: bool,
    with_secrets: Option<&std::path::Path>,
) -> Guard {
    if name_free.verdict == crate::guards::Verdict::Fail || resumed || !bundle.exists() {
        return name_free;
    }
    let shown = crate::printable::line(&bundle.display().to_string());
    let same = |named: &std::path::Path| {
        let real = |p: &std::path::Path| std::fs::canonicalize(p).ok();
        real(named).is_some_and(|n| Some(n) == real(bundle))
    };
    if with_secrets.is_some_and(same) {
        return Guard::pass(
            GuardId::NameFree,
            format!(
                "no context is named {}; secrets bundle {shown} is left at the name and --with-secrets names it: the new cluster is made with its keys",
                crate::printable::line(
                    bundle
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_suffix(".secrets.yaml"))
                        .unwrap_or_default()
                )
            ),
        );
    }
    Guard::fail(
        GuardId::NameFree,
        format!(
            "secrets bundle {shown} is left from an earlier cluster of this name, and no create journal resumes with it; a new cluster never reuses its keys unless --with-secrets names that file: move it away, name it with --with-secrets, or delete that cluster first"
        ),
    )
}

/// The Talos release runs the Kubernetes release.
pub fn version_pair(talos: &str, kubernetes: &str) -> Guard {
    let id = GuardId::VersionPair;
    let (Ok(t), Ok(k)) = (TalosVersion::parse(talos), KubeVersion::parse(kubernetes)) else {
        return Guard::fail(
            id,
            format!("{talos} / {kubernetes}: not a Talos and a Kubernetes version"),
        );
    };
    if let Err(e) = crate::cluster_config::ConfigContract::for_talos(&t) {
        return Guard::fail(id, e.to_string());
    }
    let range = supported_kubernetes_range(t.minor_key());
    match range {
        None => Guard::fail(id, format!("Talos {t} is not in the support matrix")),
        Some(r) if kubernetes_supported(&t, &k) => Guard::pass(
            id,
            format!("Talos {t} runs Kubernetes {r}; {kubernetes} is in it"),
        ),
        Some(r) => Guard::fail(
            id,
            format!("Talos {t} runs Kubernetes {r} only; {kubernetes} is outside it"),
        ),
    }
}

/// An odd number of control planes; an even one needs its acknowledgement.
pub fn control_plane_count(count: usize) -> Guard {
    let id = GuardId::ControlPlaneCount;
    match count {
        0 => Guard::fail(id, "a cluster needs at least one control plane"),
        n if n.is_multiple_of(2) => Guard::warn(
            id,
            format!(
                "{n} control planes: an even etcd member count tolerates no more failures than {}",
                n - 1
            ),
        )
        .acked_by(EVEN_MEMBERS_ACK),
        1 => Guard::pass(
            id,
            "1 control plane: the API is down whenever it is (no etcd failure tolerated)",
        ),
        n => Guard::pass(
            id,
            format!("{n} control planes tolerate {} failed", (n - 1) / 2),
        ),
    }
}

/// The plan was made from the provider's answers: its templates (or service template) exist,
/// and the provider has room for the VMs (quotas, role bounds: provision's room verdicts).
pub fn provider_ready(plan: &CreatePlan) -> Guard {
    let id = GuardId::ProviderReady;
    let answered = match &plan.source {
        super::plan::VmSource::Templates {
            controlplane,
            worker,
        } => format!(
            "{} answered with templates {} and {}",
            plan.provider, controlplane.name, worker.name
        ),
        super::plan::VmSource::Service { template, .. } => format!(
            "{} answered with service template {}",
            plan.provider, template.name
        ),
    };
    room_guard(id, &answered, &room_findings(&plan.room))
}

/// USER_DATA is readable by anyone who may read the VM; and it needs the endpoint before any
/// VM exists (it is in the config the VM boots with).
pub fn config_delivery(plan: &CreatePlan) -> Guard {
    let id = GuardId::ConfigDelivery;
    match (plan.delivery, &plan.endpoint) {
        (Delivery::UserData, EndpointChoice::Given(_)) => Guard::warn(
            id,
            "USER_DATA holds the cluster's secrets: anyone who can read the VM can read it",
        ),
        (Delivery::UserData, other) => Guard::fail(
            id,
            format!(
                "user-data delivery writes the endpoint into the config each VM boots with, before {} exists: pass --endpoint, or use --deliver maintenance",
                other.describe()
            ),
        ),
        (Delivery::Maintenance, _) => Guard::pass(
            id,
            "maintenance mode: configs go over the Talos API to the fingerprint you confirm",
        ),
    }
}

/// Every delete guard, in [`GuardId::DELETE`] order.
pub fn delete_guards(plan: &DeletePlan) -> Vec<Guard> {
    vec![
        no_rollout(plan.lease_holder.as_deref(), plan.lease_unread.as_deref()),
        known_vms(plan),
        Guard::warn(
            GuardId::DestroysData,
            format!(
                "{} VM(s) terminated: etcd, every Kubernetes object and every volume on them are gone",
                plan.vms.len()
            ),
        )
        .acked_by(DESTROYS_ACK),
    ]
}

/// Fails closed: a Lease that could not be read passes only with the acknowledgement every
/// mutating operation asks then (upgrade/guards.rs `lease_guard`, [`LEASE_UNREAD_ACK`]).
fn no_rollout(holder: Option<&str>, unread: Option<&str>) -> Guard {
    let id = GuardId::NoOtherRollout;
    match (holder, unread) {
        (Some(h), _) => Guard::fail(
            id,
            format!(
                "a rollout holds the cluster's Lease ({}): wait for it to end",
                crate::printable::line(h)
            ),
        ),
        (None, Some(why)) => Guard::warn(
            id,
            format!(
                "the cluster's rollout Lease cannot be read ({}): another console's rollout cannot be seen; type the acknowledgement only if you know no one else is changing it",
                crate::printable::line(why)
            ),
        )
        .acked_by(LEASE_UNREAD_ACK),
        (None, None) => Guard::pass(id, "no rollout holds the cluster"),
    }
}

fn known_vms(plan: &DeletePlan) -> Guard {
    let id = GuardId::KnownVms;
    match plan.known_by {
        VmsKnownBy::CreateJournal => Guard::pass(
            id,
            format!(
                "taloscope created {}: its journal names the VMs",
                plan.cluster
            ),
        ),
        VmsKnownBy::Adopted => Guard::pass(id, "the VMs named with --adopt"),
        VmsKnownBy::Unknown => Guard::fail(
            id,
            format!(
                "taloscope did not create {0} (no create journal): name its VMs with `taloscope delete --context {0} --adopt VMID,...`",
                plan.cluster
            ),
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cluster_lifecycle::plan::{KnownVm, PatchFiles, PlannedVm, TemplateRef, VmSource};
    use crate::config::{MachineRole, ProviderKind};
    use crate::guards::{Verdict, blocking};

    pub(crate) fn plan(cps: usize, delivery: Delivery, endpoint: EndpointChoice) -> CreatePlan {
        let t = |id, name: &str| TemplateRef {
            id,
            name: name.into(),
        };
        CreatePlan {
            cluster: "lab".into(),
            provider: "one".into(),
            provider_kind: ProviderKind::Opennebula,
            provider_endpoint: "http://127.0.0.1:2633/RPC2".into(),
            source: VmSource::Templates {
                controlplane: t(1, "talos-controlplane"),
                worker: t(2, "talos-worker"),
            },
            controlplanes: cps,
            workers: 2,
            vms: (1..=cps)
                .map(|n| (n, MachineRole::Controlplane))
                .chain((1..=2).map(|n| (n, MachineRole::Worker)))
                .map(|(n, role)| PlannedVm {
                    name: format!("lab-{role}-{n}"),
                    role,
                })
                .collect(),
            talos: "v1.11.3".into(),
            kubernetes: "1.34.3".into(),
            kubernetes_defaulted: true,
            delivery,
            endpoint,
            patches: PatchFiles::default(),
            with_secrets: None,
            bundle_path: "/s/clusters/lab/secrets.yaml".into(),
            journal_path: "/s/clusters/lab.json".into(),
            room: Default::default(),
        }
    }

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_name_in_either_file_fails_and_names_the_file() {
        let p = plan(3, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
        let (t, k) = (names(&["prod"]), names(&["lab", "prod"]));
        let gs = create_guards(&CreateFacts {
            plan: &p,
            talos_contexts: &t,
            kube_contexts: &k,
        });
        let g = &gs[0];
        assert_eq!((g.id, g.verdict), (GuardId::NameFree, Verdict::Fail));
        assert!(g.reason.contains("a kubeconfig context"), "{}", g.reason);
        assert!(blocking(&gs, &[]));
        let empty = names(&[]);
        let gs = create_guards(&CreateFacts {
            plan: &p,
            talos_contexts: &empty,
            kube_contexts: &empty,
        });
        assert!(!blocking(&gs, &[]), "{gs:?}");
    }

    #[test]
    fn a_bundle_left_at_the_name_fails_the_name_guard_unless_a_journal_resumes_it() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("lab.secrets.yaml");
        let free = Guard::pass(GuardId::NameFree, "no context is named lab");
        assert_eq!(bundle_free(free.clone(), &bundle, false, None), free);
        std::fs::write(&bundle, "keys").unwrap();
        let g = bundle_free(free.clone(), &bundle, false, None);
        assert_eq!(g.verdict, Verdict::Fail);
        assert!(
            g.reason.contains("lab.secrets.yaml is left"),
            "{}",
            g.reason
        );
        assert_eq!(
            bundle_free(free.clone(), &bundle, true, None).verdict,
            Verdict::Pass
        );
        let other = dir.path().join("other.secrets.yaml");
        std::fs::write(&other, "keys").unwrap();
        let g = bundle_free(free.clone(), &bundle, false, Some(&other));
        assert_eq!(
            g.verdict,
            Verdict::Fail,
            "another bundle does not free the name"
        );
        assert!(g.reason.contains("--with-secrets"), "{}", g.reason);
        let named = dir.path().join("./lab.secrets.yaml");
        let g = bundle_free(free, &bundle, false, Some(&named));
        assert_eq!(g.verdict, Verdict::Pass, "{}", g.reason);
        assert!(g.reason.contains("made with its keys"), "{}", g.reason);
    }

    #[test]
    fn the_context_files_guard_names_the_files_and_the_kube_names_or_the_refusal() {
        let files = crate::cluster_config::ContextFiles {
            talosconfig: "/home/op/.talos/config".into(),
            kubeconfig: "/home/op/.kube/config".into(),
            keep_current_context: false,
            kept_backups: 5,
        };
        let names = crate::cluster_config::KubeNames {
            context: "admin@lab-1".into(),
            cluster: "lab".into(),
            user: "admin@lab".into(),
        };
        let pass = context_files(Ok(&names), Some(&files));
        assert_eq!(pass.verdict, crate::guards::Verdict::Pass);
        assert!(
            pass.reason.contains("/home/op/.kube/config"),
            "{}",
            pass.reason
        );
        assert!(
            pass.reason.contains("kube context admin@lab-1"),
            "{}",
            pass.reason
        );
        let fail = context_files(
            Err("/home/op/.kube/config.lock exists\x1b[2J"),
            Some(&files),
        );
        assert_eq!(fail.verdict, crate::guards::Verdict::Fail);
        assert!(!fail.reason.contains('\x1b'), "{}", fail.reason);
        let none = context_files(Ok(&names), None);
        assert_eq!(none.verdict, crate::guards::Verdict::Fail);
    }

    #[test]
    fn an_even_control_plane_count_needs_its_ack_and_zero_fails() {
        assert_eq!(control_plane_count(3).verdict, Verdict::Pass);
        let even = control_plane_count(2);
        assert!(even.blocks(&[]));
        assert!(!even.blocks(&[EVEN_MEMBERS_ACK.to_string()]));
        assert_eq!(control_plane_count(0).verdict, Verdict::Fail);
    }

    #[test]
    fn the_version_pair_follows_the_support_matrix() {
        assert_eq!(version_pair("v1.11.3", "1.34.3").verdict, Verdict::Pass);
        let g = version_pair("v1.11.3", "1.28.0");
        assert_eq!(g.verdict, Verdict::Fail);
        assert!(g.reason.contains("outside"), "{}", g.reason);
        assert_eq!(version_pair("v0.1.0", "1.28.0").verdict, Verdict::Fail);
        assert_eq!(version_pair("x", "1.28.0").verdict, Verdict::Fail);
    }

    #[test]
    fn user_data_warns_that_the_vm_reveals_it_and_needs_a_given_endpoint() {
        let given = EndpointChoice::Given("10.0.0.5".into());
        let g = config_delivery(&plan(3, Delivery::UserData, given));
        assert_eq!(g.verdict, Verdict::Warn);
        assert!(g.reason.contains("anyone who can read the VM"));
        assert!(!g.blocks(&[]), "a warning to read, not to type");
        let g = config_delivery(&plan(
            3,
            Delivery::UserData,
            EndpointChoice::FirstControlPlane,
        ));
        assert_eq!(g.verdict, Verdict::Fail);
    }

    #[test]
    fn the_provider_guard_names_the_quota_the_plan_does_not_fit() {
        use crate::opennebula::QuotaMetric;
        use crate::opennebula::quota::HolderKind;
        use crate::provision::room::tests::{demand, holder};
        use crate::provision::room::{ProviderRoom, QuotaReading};
        let mut p = plan(3, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
        let g = provider_ready(&p);
        assert_eq!(g.verdict, Verdict::Pass, "not asked: {}", g.reason);
        let alice = holder(HolderKind::User, 5, "alice", &[(QuotaMetric::Vms, 10, 7)]);
        p.room = ProviderRoom {
            roles: Vec::new(),
            quotas: Some((
                QuotaReading {
                    holders: vec![alice],
                    unreadable: Vec::new(),
                },
                demand(5),
            )),
        };
        let g = provider_ready(&p);
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(
            g.reason,
            "one answered with templates talos-controlplane and talos-worker; user alice: VMS quota 10, 7 used, the plan needs 5"
        );
        if let Some((reading, _)) = &mut p.room.quotas {
            reading.holders.clear();
            reading.unreadable = vec!["the provider's user may not read its own VM quota".into()];
        }
        let g = provider_ready(&p);
        assert_eq!(g.verdict, Verdict::Warn, "{}", g.reason);
        assert!(!g.blocks(&[]), "a warning to read");
    }

    #[test]
    fn a_delete_needs_known_vms_no_rollout_and_the_typed_ack() {
        let mut p = DeletePlan {
            cluster: "lab".into(),
            provider: Some("one".into()),
            provider_endpoint: None,
            known_by: VmsKnownBy::Unknown,
            service: None,
            vms: vec![KnownVm {
                id: 7,
                name: "lab-controlplane-1".into(),
            }],
            talos_context: Some("lab".into()),
            kube_context: Some("admin@lab".into()),
            merged: None,
            secrets_bundle: None,
            journals: vec![],
            lease_holder: None,
            lease_unread: None,
        };
        let ack = [DESTROYS_ACK.to_string()];
        assert!(blocking(&delete_guards(&p), &ack), "unknown VMs");
        p.known_by = VmsKnownBy::Adopted;
        assert!(!blocking(&delete_guards(&p), &ack));
        assert!(blocking(&delete_guards(&p), &[]), "the ack is needed");
        // A Lease that cannot be read fails closed: the same acknowledgement as every other
        // mutating operation.
        p.lease_unread = Some("no kube context of lab in the kubeconfig".into());
        let gs = delete_guards(&p);
        assert_eq!(gs[0].verdict, Verdict::Warn, "{}", gs[0].reason);
        assert!(gs[0].reason.contains("cannot be read"), "{}", gs[0].reason);
        assert!(blocking(&gs, &ack), "the Lease's ack is needed too");
        let both = [DESTROYS_ACK.to_string(), LEASE_UNREAD_ACK.to_string()];
        assert!(!blocking(&gs, &both));
        p.lease_holder = Some("alice@ops1/42-1".into());
        let gs = delete_guards(&p);
        assert_eq!(gs[0].verdict, Verdict::Fail);
        assert!(gs[0].reason.contains("alice@ops1"), "{}", gs[0].reason);
        assert!(blocking(&gs, &both), "a holder is never acknowledged away");
    }
}
