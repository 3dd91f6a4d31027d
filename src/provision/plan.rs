//! A provision plan: which cluster, provider, role and how many, from which
//! VM template (or OneFlow service role), with which machine config, and the
//! names the new VMs get. Pure: the planner in `provider.rs` fills it in.
use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

use crate::approval::MutatingAction;
use crate::config::{MachineRole, ProviderKind};

use super::journal::ProviderAt;
use super::provider::Provider;
use super::room::ProviderRoom;

/// Where new VMs come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanSource {
    /// `one.template.instantiate` of a VM template, once per VM.
    Template { id: u64, name: String },
    /// A OneFlow service role's cardinality raised by `count`.
    ServiceRole {
        service_id: u64,
        service_name: String,
        role: String,
        cardinality: u64,
        target: u64,
        /// The role's `max_vms`, when the service sets one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_vms: Option<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProvisionPlan {
    pub cluster: String,
    pub provider: String,
    pub provider_kind: ProviderKind,
    pub endpoint: String,
    pub role: MachineRole,
    pub count: usize,
    pub source: PlanSource,
    /// Sent as USER_DATA (template providers; OneFlow roles carry their own).
    pub machine_config: Option<PathBuf>,
    /// `{cluster}`, `{role}` and `{n}` placeholders.
    pub name_pattern: String,
    /// The names the new VMs get (template providers; OneFlow names its own).
    pub vm_names: Vec<String>,
    /// What the provider said about room for the VMs (its quotas), for the guards.
    #[serde(skip)]
    pub room: ProviderRoom,
}

impl ProvisionPlan {
    /// The plan of `count` VMs of `role` an earlier run started on `provider` for `cluster`
    /// (its config key), followed again from its journal: only what the runner's following
    /// reads (who, where, which role); nothing in it is created.
    pub fn following(
        cluster: &str,
        provider: &Provider,
        role: MachineRole,
        count: usize,
    ) -> ProvisionPlan {
        ProvisionPlan {
            cluster: cluster.to_string(),
            provider: provider.name.clone(),
            provider_kind: provider.kind,
            endpoint: provider.endpoint.clone(),
            role,
            count,
            source: PlanSource::Template {
                id: 0,
                name: "from the journal".into(),
            },
            machine_config: None,
            name_pattern: String::new(),
            vm_names: Vec::new(),
            room: Default::default(),
        }
    }

    /// The plan's provider as its journal keys VMs: name and endpoint.
    pub fn provider_at(&self) -> ProviderAt<'_> {
        ProviderAt {
            name: &self.provider,
            endpoint: &self.endpoint,
        }
    }

    /// The action the operator confirms for this plan.
    pub fn action(&self) -> MutatingAction {
        MutatingAction::Provision {
            cluster: self.cluster.clone(),
            provider: self.provider.clone(),
            role: self.role.as_str().to_string(),
            count: self.count,
        }
    }

    /// Whether `action` is the approval of this plan.
    pub fn is_approved_by(&self, action: &MutatingAction) -> bool {
        *action == self.action()
    }

    /// The plan as operators read it.
    pub fn table(&self) -> String {
        let source = match &self.source {
            PlanSource::Template { id, name } => format!("VM template {name} (id {id})"),
            PlanSource::ServiceRole {
                service_id,
                service_name,
                role,
                cardinality,
                target,
                ..
            } => format!(
                "OneFlow service {service_name} (id {service_id}), role {role}: cardinality {cardinality} -> {target}"
            ),
        };
        let mut out = format!(
            "PROVISION  {} new {} node(s) for cluster {}\nPROVIDER   {} ({}, {})\nSOURCE     {source}\n",
            self.count, self.role, self.cluster, self.provider, self.provider_kind, self.endpoint
        );
        if let Some(mc) = &self.machine_config {
            out.push_str(&format!("CONFIG     {}\n", mc.display()));
        }
        if !self.vm_names.is_empty() {
            out.push_str(&format!("VMS        {}\n", self.vm_names.join(", ")));
        }
        out
    }
}

/// The default name pattern: `<cluster>-<role>-{n}`.
pub const DEFAULT_NAME_PATTERN: &str = "{cluster}-{role}-{n}";

/// `count` names from `pattern`, numbering from 1 and skipping every name in
/// `existing` (VMs, Kubernetes nodes, Talos members). A pattern without
/// `{n}` gets `-{n}` appended so names stay distinct.
pub fn vm_names(
    pattern: &str,
    cluster: &str,
    role: MachineRole,
    count: usize,
    existing: &BTreeSet<String>,
) -> Vec<String> {
    let pattern = if pattern.contains("{n}") {
        pattern.to_string()
    } else {
        format!("{pattern}-{{n}}")
    };
    let base = pattern
        .replace("{cluster}", cluster)
        .replace("{role}", role.as_str());
    (1..)
        .map(|n: u64| base.replace("{n}", &n.to_string()))
        .filter(|name| !existing.contains(name))
        .take(count)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_skip_existing() {
        let existing: BTreeSet<String> = ["healthy-worker-1", "healthy-worker-3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            vm_names(
                DEFAULT_NAME_PATTERN,
                "healthy",
                MachineRole::Worker,
                3,
                &existing
            ),
            ["healthy-worker-2", "healthy-worker-4", "healthy-worker-5"]
        );
        assert_eq!(
            vm_names(
                "talos-cp",
                "x",
                MachineRole::Controlplane,
                2,
                &BTreeSet::new()
            ),
            ["talos-cp-1", "talos-cp-2"]
        );
        assert!(vm_names("a-{n}", "x", MachineRole::Worker, 0, &BTreeSet::new()).is_empty());
    }

    #[test]
    fn plan_matches_its_action_only() {
        let plan = ProvisionPlan {
            cluster: "healthy".into(),
            provider: "lab".into(),
            provider_kind: ProviderKind::Opennebula,
            endpoint: "http://127.0.0.1:2633/RPC2".into(),
            role: MachineRole::Worker,
            count: 2,
            source: PlanSource::Template {
                id: 1,
                name: "talos-worker".into(),
            },
            machine_config: Some("/s/worker.yaml".into()),
            name_pattern: DEFAULT_NAME_PATTERN.into(),
            vm_names: vec!["healthy-worker-1".into(), "healthy-worker-2".into()],
            room: Default::default(),
        };
        assert!(plan.is_approved_by(&plan.action()));
        let other = MutatingAction::Provision {
            cluster: "healthy".into(),
            provider: "lab".into(),
            role: "worker".into(),
            count: 3,
        };
        assert!(!plan.is_approved_by(&other));
        let table = plan.table();
        assert!(
            table.contains("talos-worker (id 1)") && table.contains("healthy-worker-2"),
            "{table}"
        );
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["source"]["kind"], "template");
        assert_eq!(json["role"], "worker");
    }
}
