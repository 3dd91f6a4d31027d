//! From what the operator asked to a create plan: the name and versions checked, the
//! Kubernetes version defaulted from the support matrix, the patch files readable, and the
//! provider asked for its templates (XML-RPC) or service template (OneFlow) and the VM names in
//! use. The same function for the CLI's `--plan` and the console's plan screen.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::config::{MachineRole, NameOrId};
use crate::opennebula::{OneError, TemplateInfo};
use crate::provision::plan::{DEFAULT_NAME_PATTERN, vm_names};
use crate::provision::provider::{find_template, quotas_for, read_quotas};
use crate::provision::room::{ProviderRoom, RoleBounds, VmDemand};
use crate::provision::{Provider, ProviderClients};
use crate::upgrade::releases::ReleaseLookup;
use crate::versions::{
    KubeVersion, TalosVersion, is_known_talos_release, latest_kubernetes_release,
    supported_kubernetes_range, talosctl_default_kubernetes,
};

use super::journal::CreateJournal;
use super::plan::{
    CreatePlan, Delivery, EndpointChoice, PatchFiles, PlannedVm, TemplateRef, VmSource,
};

/// What the operator asked for (the create command's flags, the console's wizard).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateRequest {
    pub cluster: String,
    pub provider: String,
    pub controlplanes: usize,
    pub workers: usize,
    pub talos: String,
    pub kubernetes: Option<String>,
    pub endpoint: Option<String>,
    pub delivery: Delivery,
    pub patches: PatchFiles,
    /// A secrets bundle to make the cluster with (`--with-secrets`).
    pub with_secrets: Option<PathBuf>,
}

/// The most control planes and workers a create asks for (`create`'s `--controlplanes` and
/// `--workers` take 1..=9 and 0..=100; the console's wizard counts within them).
pub const MAX_CONTROLPLANES: usize = 9;
pub const MAX_WORKERS: usize = 100;

impl CreateRequest {
    /// The request that plans `plan` again (a killed run's, to resume it): the Kubernetes
    /// version as asked (none when it was defaulted) and the endpoint only when given.
    pub fn from_plan(plan: &CreatePlan) -> CreateRequest {
        CreateRequest {
            cluster: plan.cluster.clone(),
            provider: plan.provider.clone(),
            controlplanes: plan.controlplanes,
            workers: plan.workers,
            talos: plan.talos.clone(),
            kubernetes: (!plan.kubernetes_defaulted).then(|| plan.kubernetes.clone()),
            endpoint: match &plan.endpoint {
                EndpointChoice::Given(a) => Some(a.clone()),
                _ => None,
            },
            delivery: plan.delivery,
            patches: plan.patches.clone(),
            with_secrets: plan.with_secrets.clone(),
        }
    }
}

/// Why no plan could be made; names the flag, file or provider.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Patch(#[from] crate::cluster_config::PatchError),
    #[error(transparent)]
    Provider(#[from] OneError),
}

/// The default VM template names per role, when the provider's config names none.
pub const DEFAULT_TEMPLATES: [(MachineRole, &str); 2] = [
    (MachineRole::Controlplane, "talos-controlplane"),
    (MachineRole::Worker, "talos-worker"),
];
/// The preferred OneFlow service template name, when the provider's config names none and
/// several service templates offer both roles.
pub const DEFAULT_SERVICE_TEMPLATE: &str = "talos";
/// The roles a service template needs to form a cluster.
const CLUSTER_ROLES: [&str; 2] = ["controlplane", "worker"];

/// A cluster name as contexts, VM names and file names all take it: lowercase letters,
/// digits and `-`, starting with a letter, at most 40 characters.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let first_letter = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    if name.is_empty() || name.len() > 40 || !ok_chars || !first_letter || name.ends_with('-') {
        return Err(format!(
            "cluster name {:?}: use lowercase letters, digits and '-', starting with a letter, at most 40 characters",
            crate::printable::line(name)
        ));
    }
    Ok(())
}

/// The versions: Talos as given (a known release), Kubernetes as given or, as talosctl of that
/// Talos release defaults it, its `DefaultKubernetesVersion` (for a Talos minor without a row:
/// the newest known release of the newest minor it runs). Returns (talos, kubernetes without `v`,
/// defaulted).
pub fn versions(talos: &str, kubernetes: Option<&str>) -> Result<(String, String, bool), String> {
    let t =
        TalosVersion::parse(talos).map_err(|e| format!("--talos {talos:?}: {e} (e.g. v1.11.3)"))?;
    let (k, defaulted) = match kubernetes {
        Some(k) => (
            KubeVersion::parse(k).map_err(|e| format!("--kubernetes {k:?}: {e} (e.g. 1.34.1)"))?,
            false,
        ),
        None => match talosctl_default_kubernetes(&t) {
            Some(k) => (k, true),
            None => {
                let range = supported_kubernetes_range(t.minor_key()).ok_or_else(|| {
                    format!("Talos {t} is not in the support matrix; pass --kubernetes")
                })?;
                let k = latest_kubernetes_release(range.newest).ok_or_else(|| {
                    format!(
                        "no known Kubernetes release of {} to default to; pass --kubernetes",
                        range.newest
                    )
                })?;
                (k, true)
            }
        },
    };
    let kube = k.to_string().trim_start_matches('v').to_string();
    Ok((t.to_string(), kube, defaulted))
}

/// The Talos version is a release: the built-in table knows it, else the registry lists its
/// installer image (a patch or minor published after taloscope was built).
async fn check_released(talos: &str, state_dir: &Path) -> Result<(), PlanError> {
    let Ok(version) = TalosVersion::parse(talos) else {
        return Err(PlanError::Request(format!(
            "--talos {talos:?}: not a version"
        )));
    };
    if is_known_talos_release(&version) {
        return Ok(());
    }
    let learned = ReleaseLookup::for_new_cluster(state_dir).learn().await;
    if learned.releases.source_of(&version).is_some() {
        return Ok(());
    }
    Err(PlanError::Request(format!(
        "Talos {version} is not a known release ({}); pick a listed one such as {}",
        learned.origin.describe(),
        learned
            .releases
            .latest_of(version.minor_key())
            .or_else(|| learned.releases.versions().next_back())
            .map_or_else(|| "v1.11.3".to_string(), ToString::to_string)
    )))
}

/// Every patch file read and parsed as the run will read it (one function, one size limit,
/// one parser budget): a file the run would refuse is refused at plan time, before any VM.
pub fn check_patches(patches: &PatchFiles) -> Result<(), PlanError> {
    super::materials::load_patches(patches)?;
    Ok(())
}

/// Checks the request, asks the provider, and makes the plan.
pub async fn plan_create(
    provider: &Provider,
    provider_config: &crate::config::ProviderConfig,
    request: &CreateRequest,
    state_dir: &Path,
) -> Result<CreatePlan, PlanError> {
    check_name(&request.cluster).map_err(PlanError::Request)?;
    if request.controlplanes == 0 {
        return Err(PlanError::Request(
            "--controlplanes must be at least 1".into(),
        ));
    }
    let (talos, kubernetes, kubernetes_defaulted) =
        versions(&request.talos, request.kubernetes.as_deref()).map_err(PlanError::Request)?;
    check_released(&talos, state_dir).await?;
    check_patches(&request.patches)?;
    if let Some(file) = &request.with_secrets {
        crate::cluster_config::SecretsBundle::from_yaml(file)
            .map_err(|e| PlanError::Request(format!("--with-secrets: {e}")))?;
    }
    let resumed = Resumed::of(state_dir, &request.cluster);
    let (source, vms, room) = vm_source(provider, provider_config, request, &resumed).await?;
    let endpoint = match (&request.endpoint, &source) {
        (Some(a), _) => EndpointChoice::Given(a.clone()),
        (None, VmSource::Service { gateway: true, .. }) => EndpointChoice::Gateway,
        (None, _) => EndpointChoice::FirstControlPlane,
    };
    Ok(CreatePlan {
        cluster: request.cluster.clone(),
        provider: provider.name.clone(),
        provider_kind: provider.kind,
        provider_endpoint: provider.endpoint.clone(),
        source,
        controlplanes: request.controlplanes,
        workers: request.workers,
        vms,
        talos,
        kubernetes,
        kubernetes_defaulted,
        delivery: request.delivery,
        endpoint,
        patches: request.patches.clone(),
        bundle_path: CreateJournal::bundle_path_for(state_dir, &request.cluster),
        with_secrets: request.with_secrets.clone(),
        journal_path: crate::journal::CREATES.path_for(state_dir, &request.cluster),
        room,
    })
}

/// What the unfinished create journal of `cluster` says was asked for already.
#[derive(Default)]
struct Resumed {
    /// The VM names it planned: a run killed after asking for them may have made them, and they
    /// are this create's own, not taken (else the resumed run would plan other names, not find
    /// the VMs, and make a second set).
    vm_names: BTreeSet<String>,
    /// The VMs (or the OneFlow service) were asked for: they count in the quota's use already.
    requested: bool,
}

impl Resumed {
    fn of(state_dir: &Path, cluster: &str) -> Resumed {
        // A journal that cannot be read is reported when the run claims it.
        let record = CreateJournal::read(state_dir, cluster).ok().flatten();
        record.map_or_else(Resumed::default, |r| Resumed {
            vm_names: r.plan.vms.into_iter().map(|v| v.name).collect(),
            requested: r.vms_requested,
        })
    }
}

/// The templates (and VM names, free at the provider or `ours`) or the service template, and
/// what the provider says about room for the VMs: the VM quotas against what the VMs not made
/// yet need (a resumed run's VMs exist already), or each role's VM count against its bounds.
async fn vm_source(
    provider: &Provider,
    provider_config: &crate::config::ProviderConfig,
    request: &CreateRequest,
    resumed: &Resumed,
) -> Result<(VmSource, Vec<PlannedVm>, ProviderRoom), PlanError> {
    let ours = &resumed.vm_names;
    match &provider.clients {
        ProviderClients::Templates(client) => {
            let mut found: Vec<TemplateInfo> = Vec::new();
            for (role, default) in DEFAULT_TEMPLATES {
                let wanted = provider_config
                    .templates
                    .get(role)
                    .cloned()
                    .unwrap_or_else(|| NameOrId::Name(default.to_string()));
                found.push(find_template(client, &wanted).await?);
            }
            let (made, taken): (BTreeSet<String>, BTreeSet<String>) = client
                .vms()
                .await?
                .into_iter()
                .map(|v| v.name)
                .partition(|name| ours.contains(name));
            let mut vms = Vec::new();
            for (role, count) in [
                (MachineRole::Controlplane, request.controlplanes),
                (MachineRole::Worker, request.workers),
            ] {
                let names = vm_names(DEFAULT_NAME_PATTERN, &request.cluster, role, count, &taken);
                vms.extend(names.into_iter().map(|name| PlannedVm { name, role }));
            }
            let r = |t: &TemplateInfo| TemplateRef {
                id: t.id,
                name: t.name.clone(),
            };
            let source = VmSource::Templates {
                controlplane: r(&found[0]),
                worker: r(&found[1]),
            };
            let to_make = |role| {
                let role_vms = vms.iter().filter(|v| v.role == role);
                role_vms.filter(|v| !made.contains(&v.name)).count() as u64
            };
            let demand = VmDemand::of(&found[0], to_make(MachineRole::Controlplane))
                .plus(VmDemand::of(&found[1], to_make(MachineRole::Worker)));
            let room = ProviderRoom {
                roles: Vec::new(),
                quotas: Some((read_quotas(client).await, demand)),
            };
            Ok((source, vms, room))
        }
        ProviderClients::Flow { flow, vms } => {
            let template = match &provider_config.service_template {
                Some(wanted) => flow.service_template(wanted).await?,
                None => offered_service_template(&provider.name, flow, vms).await?,
            };
            for role in ["controlplane", "worker"] {
                if template.role(role).is_none() {
                    let roles: Vec<&str> = template.roles.iter().map(|r| r.name.as_str()).collect();
                    return Err(PlanError::Request(format!(
                        "provider {}: service template {} has no role {role} (it has: {})",
                        provider.name,
                        template.name,
                        roles.join(", ")
                    )));
                }
            }
            let source = VmSource::Service {
                template: TemplateRef {
                    id: template.id,
                    name: template.name.clone(),
                },
                service_name: request.cluster.clone(),
                gateway: template.role("gateway").is_some(),
            };
            let roles = role_bounds(&template, request);
            let quotas = if resumed.requested {
                None
            } else {
                let asked: Vec<(u64, u64)> = (template.roles.iter())
                    .zip(&roles)
                    .map(|(role, bounds)| (role.template_id, bounds.vms))
                    .collect();
                Some(quotas_for(vms, &asked).await)
            };
            let room = ProviderRoom { roles, quotas };
            Ok((source, Vec::new(), room))
        }
    }
}

/// Each role of `template` with the VM count the create gives it: the control planes and workers
/// asked for, any other role (the gateway) as the template says.
fn role_bounds(
    template: &crate::opennebula::ServiceTemplate,
    request: &CreateRequest,
) -> Vec<RoleBounds> {
    let asked = |role: &crate::opennebula::TemplateRole| match role.name.as_str() {
        "controlplane" => request.controlplanes as u64,
        "worker" => request.workers as u64,
        _ => role.cardinality,
    };
    template
        .roles
        .iter()
        .map(|role| RoleBounds {
            role: role.name.clone(),
            vms: asked(role),
            min_vms: role.min_vms,
            max_vms: role.max_vms,
        })
        .collect()
}

/// With no service template configured: the one the provider offers with both cluster roles
/// (among several: the one named [`DEFAULT_SERVICE_TEMPLATE`], else the one whose roles boot
/// the default VM templates).
async fn offered_service_template(
    provider: &str,
    flow: &crate::opennebula::FlowClient,
    vms: &crate::opennebula::OneClient,
) -> Result<crate::opennebula::ServiceTemplate, PlanError> {
    let all = flow.service_templates().await?;
    let mut fitting: Vec<_> = all
        .into_iter()
        .filter(|t| CLUSTER_ROLES.iter().all(|r| t.role(r).is_some()))
        .collect();
    let vm_templates = if fitting.len() > 1 {
        vms.templates()
            .await?
            .into_iter()
            .map(|t| (t.id, t.name))
            .collect()
    } else {
        std::collections::HashMap::new()
    };
    pick_service_template(&mut fitting, &vm_templates).ok_or_else(|| {
        let names: Vec<&str> = fitting.iter().map(|t| t.name.as_str()).collect();
        PlanError::Request(if names.is_empty() {
            format!(
                "provider {provider}: no OneFlow service template has roles controlplane and worker"
            )
        } else {
            format!(
                "provider {provider}: several service templates have roles controlplane and worker ({}); name one as service_template in the provider's config",
                names.join(", ")
            )
        })
    })
}

/// The only fitting template; among several the one named [`DEFAULT_SERVICE_TEMPLATE`], else
/// the only one whose roles use the [`DEFAULT_TEMPLATES`] (`vm_templates`: VM template names by id).
fn pick_service_template(
    fitting: &mut Vec<crate::opennebula::ServiceTemplate>,
    vm_templates: &std::collections::HashMap<u64, String>,
) -> Option<crate::opennebula::ServiceTemplate> {
    let boots_defaults = |t: &crate::opennebula::ServiceTemplate| {
        DEFAULT_TEMPLATES.iter().all(|(role, default)| {
            t.role(role.as_str())
                .and_then(|r| vm_templates.get(&r.template_id))
                .is_some_and(|name| name == default)
        })
    };
    let at = if fitting.len() == 1 {
        0
    } else if let Some(named) = fitting
        .iter()
        .position(|t| t.name == DEFAULT_SERVICE_TEMPLATE)
    {
        named
    } else {
        let mut defaults = fitting
            .iter()
            .enumerate()
            .filter(|(_, t)| boots_defaults(t));
        match (defaults.next(), defaults.next()) {
            (Some((at, _)), None) => at,
            _ => return None,
        }
    };
    Some(fitting.remove(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(name: &str, controlplane: u64, worker: u64) -> crate::opennebula::ServiceTemplate {
        let role = |name: &str, template_id| crate::opennebula::TemplateRole {
            name: name.into(),
            template_id,
            cardinality: 1,
            min_vms: None,
            max_vms: None,
        };
        crate::opennebula::ServiceTemplate {
            id: 0,
            name: name.into(),
            roles: vec![role("controlplane", controlplane), role("worker", worker)],
        }
    }

    #[test]
    fn the_only_fitting_service_template_or_the_one_named_talos_or_booting_the_defaults() {
        let vm_templates: std::collections::HashMap<u64, String> = [
            (1, "talos-controlplane".to_string()),
            (2, "talos-worker".to_string()),
            (3, "other".to_string()),
        ]
        .into();
        let pick = |mut fitting: Vec<_>| {
            pick_service_template(&mut fitting, &vm_templates).map(|t| t.name)
        };
        assert_eq!(pick(vec![service("x", 3, 3)]).as_deref(), Some("x"));
        let named = vec![service("a", 1, 2), service("talos", 3, 3)];
        assert_eq!(pick(named).as_deref(), Some("talos"));
        let booting = vec![service("old", 3, 3), service("talos-cluster", 1, 2)];
        assert_eq!(pick(booting).as_deref(), Some("talos-cluster"));
        assert_eq!(pick(vec![service("a", 3, 3), service("b", 3, 1)]), None);
        assert_eq!(pick(vec![service("a", 1, 2), service("b", 1, 2)]), None);
        assert_eq!(pick(Vec::new()), None);
    }

    #[test]
    fn names_fit_contexts_vms_and_files() {
        for ok in ["lab", "prod-eu-2", "a1"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Lab", "1lab", "lab-", "la b", "../x", &"a".repeat(41)] {
            let err = check_name(bad).unwrap_err();
            assert!(err.contains("lowercase letters"), "{bad}: {err}");
        }
    }

    #[test]
    fn kubernetes_defaults_as_talosctl_of_that_release() {
        let (t, k, defaulted) = versions("v1.11.3", None).unwrap();
        assert_eq!(
            (t.as_str(), k.as_str(), defaulted),
            ("v1.11.3", "1.34.1", true)
        );
        let (_, k, _) = versions("v1.9.6", None).unwrap();
        assert_eq!(k, "1.32.4");
        let (_, k, _) = versions("v1.8.4", None).unwrap();
        assert_eq!(
            k, "1.31.10",
            "no talosctl row: the newest known of the newest minor"
        );
        let (_, k, defaulted) = versions("1.11.3", Some("v1.33.2")).unwrap();
        assert_eq!((k.as_str(), defaulted), ("1.33.2", false));
        assert!(
            versions("v0.9.0", None)
                .unwrap_err()
                .contains("support matrix")
        );
        assert!(versions("eleven", None).unwrap_err().contains("--talos"));
    }

    #[test]
    fn hostile_patches_are_refused_at_plan_time_with_the_runs_limits() {
        let dir = tempfile::tempdir().unwrap();
        let mut laughs = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
            let prev = ["a", "b", "c", "d", "e", "f", "g", "h"][i];
            let refs = vec![format!("*{prev}"); 9].join(",");
            laughs.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let deep = format!("machine: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let big = format!("machine:\n  note: \"{}\"\n", "x".repeat(2_200_000));
        for (name, text, why) in [
            ("laughs.yaml", laughs, "neither a JSON patch"),
            ("deep.yaml", deep, "neither a JSON patch"),
            ("big.yaml", big, "cannot read"),
        ] {
            let file = dir.path().join(name);
            std::fs::write(&file, text).unwrap();
            let patches = PatchFiles {
                all: vec![file.clone()],
                ..PatchFiles::default()
            };
            let err = check_patches(&patches).unwrap_err().to_string();
            assert!(err.contains(why), "{name}: {err}");
            assert!(err.contains(&file.display().to_string()), "{name}: {err}");
        }
        let fine = dir.path().join("fine.yaml");
        std::fs::write(&fine, "machine:\n  install:\n    disk: /dev/vda\n").unwrap();
        let patches = PatchFiles {
            all: vec![fine],
            ..PatchFiles::default()
        };
        check_patches(&patches).unwrap();
    }

    #[test]
    fn a_missing_patch_file_is_named() {
        let patches = PatchFiles {
            worker: vec!["/nonexistent/w.yaml".into()],
            ..PatchFiles::default()
        };
        let err = check_patches(&patches).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read config patch /nonexistent/w.yaml"),
            "{err}"
        );
    }
}
