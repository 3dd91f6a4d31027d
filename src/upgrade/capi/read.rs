//! The CAPI-way upgrade's IO on the management cluster: the workload cluster's tree, the
//! facts a plan needs (where each object's machine template points and the VM template it
//! names), the template copy, the patches, and a Talos client from the `<cluster>-talosconfig`
//! Secret the bootstrap provider keeps current (the operator's file goes stale as Machines go).
use kube::config::Kubeconfig;
use serde_json::{Value, json};

use super::plan::{
    CapiPlanError, CapiProduct, CapiUpgradePlan, InfraFacts, PlanFacts, TemplateCopy, capi_plan,
};
use crate::capi::{CapiOwner, ClusterTree, cluster_tree};
use crate::fleet::{ClusterStatus, CollectOptions};
use crate::kube::capi_write::ObjectRef;
use crate::kube::{CAPI_GROUP, CapiVersion, KubeClient};
use crate::talos::{ClientOptions, TalosClient};
use crate::upgrade::observe::ClusterObserver;

const CONTROL_PLANE_GROUP: &str = "controlplane.cluster.x-k8s.io";

/// The management cluster that owns one workload cluster, connected.
pub struct CapiAccess {
    pub client: KubeClient,
    pub owner: CapiOwner,
    pub version: CapiVersion,
}

/// The group of a reference: v1beta2's `apiGroup`, else the group of `apiVersion`.
fn ref_group(r: &Value) -> String {
    if let Some(g) = r["apiGroup"].as_str() {
        return g.to_string();
    }
    let api_version = r["apiVersion"].as_str().unwrap_or_default();
    api_version
        .split_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default()
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

impl CapiAccess {
    /// A client of `owner.management` from `kubeconfig`; the CAPI version it serves.
    pub async fn connect(kubeconfig: &Kubeconfig, owner: &CapiOwner) -> Result<CapiAccess, String> {
        let client = KubeClient::new(kubeconfig, &owner.management, Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let version = client
            .capi_version()
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "{} no longer serves {CAPI_GROUP}: not a management cluster",
                    owner.management
                )
            })?;
        Ok(CapiAccess {
            client,
            owner: owner.clone(),
            version,
        })
    }

    fn object<'a>(&'a self, group: &'a str, kind: &'a str, name: &'a str) -> ObjectRef<'a> {
        ObjectRef {
            group,
            kind,
            namespace: &self.owner.namespace,
            name,
        }
    }

    /// The workload cluster's tree as the management cluster holds it now.
    pub async fn tree(&self) -> Result<ClusterTree, String> {
        let objects = self
            .client
            .capi_objects(self.version)
            .await
            .map_err(|e| e.to_string())?;
        let cluster = objects
            .clusters
            .iter()
            .find(|c| c.meta.namespace == self.owner.namespace && c.meta.name == self.owner.name)
            .ok_or_else(|| format!("Cluster {} is gone from its management cluster", self.owner))?;
        Ok(cluster_tree(&self.owner.management, &objects, cluster))
    }

    async fn raw(&self, group: &str, kind: &str, name: &str) -> Result<Value, String> {
        let object = self.object(group, kind, name);
        self.client
            .capi_object(&object)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{object} is not there"))
    }

    /// Where the TalosControlPlane's and each MachineDeployment's machine template points;
    /// for a Talos upgrade also the VM template each names.
    pub async fn plan_facts(
        &self,
        tree: &ClusterTree,
        product: CapiProduct,
    ) -> Result<PlanFacts, String> {
        let mut facts = PlanFacts::default();
        if let Some(cp) = &tree.control_plane {
            let tcp = self.raw(CONTROL_PLANE_GROUP, &cp.kind, &cp.name).await?;
            let r = &tcp["spec"]["infrastructureTemplate"];
            let mut infra = InfraFacts {
                group: ref_group(r),
                kind: text(&r["kind"]),
                name: text(&r["name"]),
                ..InfraFacts::default()
            };
            if product == CapiProduct::TalosOs {
                infra.vm_template = self.vm_template(&infra).await?;
            }
            facts
                .infra
                .insert(format!("{}/{}", cp.kind, cp.name), infra);
        }
        for d in &tree.machine_deployments {
            let md = self.raw(CAPI_GROUP, "MachineDeployment", &d.name).await?;
            let spec = &md["spec"]["template"]["spec"];
            let r = &spec["infrastructureRef"];
            let mut infra = InfraFacts {
                group: ref_group(r),
                kind: text(&r["kind"]),
                name: text(&r["name"]),
                vm_template: String::new(),
            };
            if product == CapiProduct::TalosOs {
                infra.vm_template = self.vm_template(&infra).await?;
            }
            facts
                .infra
                .insert(format!("MachineDeployment/{}", d.name), infra);
        }
        Ok(facts)
    }

    async fn vm_template(&self, infra: &InfraFacts) -> Result<String, String> {
        let template = self.raw(&infra.group, &infra.kind, &infra.name).await?;
        Ok(text(&template["spec"]["template"]["spec"]["templateName"]))
    }

    /// Creates the copy of the machine template naming the target's VM template; a copy
    /// already there (a resumed run) is used when it names that VM template.
    pub async fn copy_template(&self, copy: &TemplateCopy) -> Result<bool, String> {
        let target = self.object(&copy.group, &copy.kind, &copy.to);
        if let Some(existing) = self
            .client
            .capi_object(&target)
            .await
            .map_err(|e| e.to_string())?
        {
            let names = text(&existing["spec"]["template"]["spec"]["templateName"]);
            return if names == copy.vm_template_to {
                Ok(false)
            } else {
                Err(format!(
                    "{target} exists and names VM template {names:?}, not {:?}; rename or delete it",
                    copy.vm_template_to
                ))
            };
        }
        let from = self.raw(&copy.group, &copy.kind, &copy.from).await?;
        let mut spec = from["spec"].clone();
        spec["template"]["spec"]["templateName"] = json!(copy.vm_template_to);
        let body = json!({
            "apiVersion": from["apiVersion"],
            "kind": copy.kind,
            "metadata": {"name": copy.to, "namespace": self.owner.namespace,
                "labels": from["metadata"]["labels"]},
            "spec": spec,
        });
        self.client
            .capi_create(&target, &body)
            .await
            .map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Applies the phase's merge patch to its object.
    pub async fn patch(&self, kind: &str, name: &str, patch: &Value) -> Result<(), String> {
        let group = if kind == "TalosControlPlane" {
            CONTROL_PLANE_GROUP
        } else {
            CAPI_GROUP
        };
        let object = self.object(group, kind, name);
        self.client
            .capi_merge_patch(&object, patch)
            .await
            .map(|_| ())
            .map_err(|e| format!("patching {object}: {e}"))
    }

    /// Deletes one Machine of the cluster (an OnDelete phase's step).
    pub async fn delete_machine(&self, name: &str) -> Result<(), String> {
        self.client
            .delete_capi_machine(self.version, &self.owner.namespace, name)
            .await
            .map(|_| ())
            .map_err(|e| format!("deleting Machine {name}: {e}"))
    }

    /// The plan of `product` to `version` (`target` as the dispatcher names it) from the tree
    /// and the machine templates as the management cluster holds them now: `Err` when they
    /// cannot be read, `Ok(Err)` when no plan can be made of them.
    pub async fn read_plan(
        &self,
        cluster: &str,
        product: CapiProduct,
        (version, target): (&str, &str),
    ) -> Result<Result<CapiUpgradePlan, CapiPlanError>, String> {
        let tree = self.tree().await?;
        let facts = self.plan_facts(&tree, product).await?;
        Ok(capi_plan(
            cluster,
            &tree,
            product,
            (version, target),
            &facts,
        ))
    }

    /// The tree and the workload cluster's status (over the Secret's Talos endpoints) that
    /// the guards look at, read now.
    pub async fn tree_and_status(
        &self,
        plan: &CapiUpgradePlan,
        kube: Option<KubeClient>,
        client: ClientOptions,
    ) -> Result<(ClusterTree, ClusterStatus), String> {
        let tree = self.tree().await?;
        let status = self
            .workload_observer(plan, kube, client)
            .await?
            .status()
            .await;
        Ok((tree, status))
    }

    /// The workload cluster's status through the Talos endpoints the bootstrap provider
    /// keeps in `<cluster>-talosconfig`, and its Kubernetes API through `kube`.
    pub async fn workload_observer(
        &self,
        plan: &CapiUpgradePlan,
        kube: Option<KubeClient>,
        client: ClientOptions,
    ) -> Result<ClusterObserver, String> {
        secret_observer(&self.client, &self.owner, &plan.cluster, kube, client).await
    }
}

/// An observer of workload cluster `cluster` (owned by `owner`) through the Talos endpoints of
/// the `<cluster>-talosconfig` Secret the bootstrap provider keeps current (the operator's
/// talosconfig goes stale as Machines are replaced), and its Kubernetes API through `kube`.
pub async fn secret_observer(
    management: &KubeClient,
    owner: &CapiOwner,
    cluster: &str,
    kube: Option<KubeClient>,
    client: ClientOptions,
) -> Result<ClusterObserver, String> {
    let secret = format!("{}-talosconfig", owner.name);
    let text = management
        .capi_talosconfig(&owner.namespace, &owner.name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "Secret {}/{secret} has no talosconfig: the bootstrap provider keeps one for each cluster",
                owner.namespace
            )
        })?;
    let label = std::path::PathBuf::from(format!("secret {}/{secret}", owner.namespace));
    let load = crate::discovery::load_talosconfig_texts(&[(label, text)]);
    let ctx = load
        .current_context
        .as_ref()
        .and_then(|name| load.contexts.iter().find(|c| &c.name == name))
        .or(load.contexts.first())
        .ok_or_else(|| {
            format!(
                "Secret {}/{secret}: no usable talosconfig context",
                owner.namespace
            )
        })?;
    let talos = TalosClient::new(ctx, client).map_err(|e| e.to_string())?;
    Ok(ClusterObserver {
        cluster: cluster.to_string(),
        talos,
        kube,
        nodes: ctx.nodes.clone(),
        options: CollectOptions {
            client,
            ..CollectOptions::default()
        },
    })
}

/// A CAPI-way plan as `taloscope upgrade` / `upgrade-k8s` and the console's plan screen both
/// read it: the management cluster connected, the plan, what its guards look at (the tree and
/// the workload cluster's status, or why they could not be read) and the provider's VM
/// templates (a Talos upgrade's).
pub struct CapiPlanReading {
    pub access: CapiAccess,
    pub plan: CapiUpgradePlan,
    pub facts: Result<(ClusterTree, ClusterStatus), String>,
    pub vm_templates: super::VmTemplates,
}

/// Why no CAPI-way plan was read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapiReadError {
    /// The management cluster could not be reached or read.
    #[error("{0}")]
    Unread(String),
    /// What it holds makes no plan (nothing to upgrade, a paused cluster...).
    #[error(transparent)]
    Plan(#[from] CapiPlanError),
}

/// What one CAPI-way plan is asked for: the workload cluster `owner` owns, the product, its
/// target (`spec.version`'s spelling, then the dispatcher's) and each Machine's bound.
pub struct CapiPlanAsk<'a> {
    pub owner: &'a CapiOwner,
    pub cluster: &'a str,
    pub product: CapiProduct,
    pub target: (&'a str, &'a str),
    pub machine_timeout_secs: u64,
}

/// Reads the plan `ask` names through `kubeconfig`, then what its guards look at (the
/// workload cluster's Kubernetes API through `kube`); `templates` reads the provider's VM
/// templates, for a Talos upgrade only.
pub async fn read_capi_plan(
    kubeconfig: Option<&Kubeconfig>,
    ask: CapiPlanAsk<'_>,
    kube: Option<KubeClient>,
    templates: impl Future<Output = super::VmTemplates>,
) -> Result<CapiPlanReading, CapiReadError> {
    let management = &ask.owner.management;
    let kubeconfig = kubeconfig.ok_or_else(|| {
        CapiReadError::Unread(format!(
            "no kubeconfig to reach the management cluster {management}"
        ))
    })?;
    let access = (CapiAccess::connect(kubeconfig, ask.owner).await)
        .map_err(|e| CapiReadError::Unread(format!("management cluster {management}: {e}")))?;
    let read = access.read_plan(ask.cluster, ask.product, ask.target).await;
    let mut plan = read.map_err(CapiReadError::Unread)??;
    plan.machine_timeout_secs = ask.machine_timeout_secs;
    let facts = access
        .tree_and_status(&plan, kube, Default::default())
        .await;
    let vm_templates = match ask.product {
        CapiProduct::TalosOs => templates.await,
        CapiProduct::Kubernetes => None,
    };
    Ok(CapiPlanReading {
        access,
        plan,
        facts,
        vm_templates,
    })
}
