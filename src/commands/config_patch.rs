//! `taloscope config patch`: a machine-configuration patch rolled out node by node. `--plan`
//! prints, per node, the paths the patches change and what the node's own dry run says (the
//! mode it would apply with, reboot or not, its reasons and warnings) with every guard;
//! `--yes --confirm CLUSTER` runs it through the dispatcher and the one runner, one node at a
//! time, each back and healthy before the next. Exit 0 done / 1 refused or failed / 2 usage.
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use super::exit::{EXIT_BLOCKED, Stop, usage};
use super::gate::CommandGate;
use super::session::{check_gate, open, rollout_lease_read};
use crate::cli::{ConfigPatchArgs, GlobalArgs};
use crate::cluster_config::{ConfigPatch, PatchTarget};
use crate::node_actions::NodeActionOptions;
use crate::operation::config_patch::{
    ConfigPatchError, ConfigPatchRequest, ConfigPatchRollout, config_patch_guards,
    plan_config_patch,
};

pub(super) fn run(global: &GlobalArgs, args: &ConfigPatchArgs) -> Result<ExitCode, Stop> {
    check_gate(&args.gate, "cluster")?;
    let patches = args
        .patches
        .iter()
        .map(|file| ConfigPatch::load(file, PatchTarget::All))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage(crate::printable::line(&e.to_string())))?;
    let (chosen, cluster) = open(global, &args.gate, "cluster")?;
    let (runtime, observer, status) = (cluster.runtime, cluster.observer, cluster.status);
    let request = ConfigPatchRequest {
        patches,
        role: args.role,
        nodes: args.nodes.clone(),
        mode: args.mode,
        try_timeout: args.try_timeout,
    };
    let (plan, lease, owner) = runtime.block_on(async {
        let plan = plan_config_patch(&observer.talos, &status, &request).await;
        let lease = rollout_lease_read(&observer).await;
        (plan, lease, chosen.capi_owner().await)
    });
    let plan = plan.map_err(|e| match e {
        ConfigPatchError::UnknownNode { .. } | ConfigPatchError::NoTarget { .. } => {
            usage(crate::printable::line(&e.to_string()))
        }
        e => Stop(EXIT_BLOCKED, crate::printable::line(&e.to_string())),
    })?;
    let guards = config_patch_guards(
        &plan,
        None,
        &status,
        observer.talos.roles(),
        &lease,
        owner.as_ref(),
    );
    let gate = CommandGate::new(global, &chosen.paths, &args.gate);
    let approved = gate.pass(&plan, plan.action(), &guards)?;
    let options = NodeActionOptions {
        node_timeout: Duration::from_secs(args.node_timeout),
        poll_interval: Duration::from_millis(args.poll_ms.max(1)),
        ..NodeActionOptions::console()
    };
    let subject = json!({"cluster": plan.cluster, "mode": plan.mode});
    let mut operation = ConfigPatchRollout::new(plan, observer, options, owner);
    gate.run_to_exit(&runtime, &approved, &mut operation, subject)
}
