//! A create's materials, made by the `cluster_config` module: the secrets bundle (generated and
//! saved owner-only the first time, loaded on every resume, never made twice), the role configs
//! for the resolved endpoint with the plan's patches, and an admin client identity. In memory
//! only; Debug shows sizes.
use std::fmt;
use std::path::Path;

use crate::cluster_config::{
    ClientCredentials, ConfigPatch, ConfigPatches, GenerateInput, MachineConfigs, PatchError,
    PatchTarget, SecretsBundle,
};
use crate::config::MachineRole;
use crate::versions::{KubeVersion, TalosVersion};

use super::plan::{CreatePlan, PatchFiles};

/// The new cluster's role configs and admin client.
#[derive(Clone)]
pub struct Materials {
    pub configs: MachineConfigs,
    pub bundle: SecretsBundle,
    pub admin: ClientCredentials,
}

impl fmt::Debug for Materials {
    // Every secret of the cluster is in here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Materials")
            .field("controlplane_bytes", &self.configs.controlplane.len())
            .field("worker_bytes", &self.configs.worker.len())
            .finish_non_exhaustive()
    }
}

impl Materials {
    /// The machine config a VM of `role` gets.
    pub fn config_for(&self, role: MachineRole) -> &[u8] {
        match role {
            MachineRole::Controlplane => self.configs.controlplane.as_bytes(),
            MachineRole::Worker => self.configs.worker.as_bytes(),
        }
    }

    /// The bundle at `bundle` (when `fresh`: the one `--with-secrets` named, else one generated
    /// for the plan's Talos version, saved there; else loaded) and the configs for `endpoint`.
    pub fn prepare(
        plan: &CreatePlan,
        endpoint: &str,
        bundle_path: &Path,
        fresh: bool,
    ) -> Result<Materials, String> {
        let talos = TalosVersion::parse(&plan.talos).map_err(|e| e.to_string())?;
        let kubernetes = KubeVersion::parse(&plan.kubernetes).map_err(|e| e.to_string())?;
        let bundle = if fresh {
            let b = match &plan.with_secrets {
                Some(file) => SecretsBundle::from_yaml(file),
                None => SecretsBundle::generate(&talos),
            }
            .map_err(|e| e.to_string())?;
            b.save(bundle_path).map_err(|e| e.to_string())?;
            b
        } else {
            SecretsBundle::from_yaml(bundle_path).map_err(|e| e.to_string())?
        };
        let mut input = GenerateInput::new(&plan.cluster, endpoint, talos, kubernetes, bundle);
        input.patches = load_patches(&plan.patches).map_err(|e| e.to_string())?;
        let configs = MachineConfigs::generate(&input).map_err(|e| e.to_string())?;
        let admin = ClientCredentials::admin(&input.bundle, time::OffsetDateTime::now_utc())
            .map_err(|e| e.to_string())?;
        Ok(Materials {
            configs,
            bundle: input.bundle,
            admin,
        })
    }
}

/// The plan's patch files, read and parsed: the planner checks them with this, and the run
/// applies what this returns.
pub(super) fn load_patches(files: &PatchFiles) -> Result<ConfigPatches, PatchError> {
    let all = files.all.iter().map(|p| (p, PatchTarget::All));
    let cps = files
        .controlplane
        .iter()
        .map(|p| (p, PatchTarget::ControlPlane));
    let workers = files.worker.iter().map(|p| (p, PatchTarget::Worker));
    let loaded: Result<Vec<ConfigPatch>, PatchError> = all
        .chain(cps)
        .chain(workers)
        .map(|(path, target)| ConfigPatch::load(&path.to_string_lossy(), target))
        .collect();
    loaded.map(ConfigPatches)
}
