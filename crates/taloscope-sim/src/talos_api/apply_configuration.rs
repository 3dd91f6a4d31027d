//! `MachineService.ApplyConfiguration` on a configured node, per Talos version, as
//! siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go
//! `ApplyConfiguration` runs it: the config parsed (pkg/machinery/config/configloader) and
//! validated (model/config_rules.rs), the mode chosen, a dry run's summary and diff, and each
//! mode's effect: now, at the next boot (`STAGED`), with a reboot (`REBOOT`, up to v1.13) or on
//! trial until confirmed (`TRY`, node_life/config_rollback.rs).
use std::sync::Arc;
use std::time::Duration;

use tonic::Status;

use super::apid::Target;
use super::machine_changes::record;
use crate::model::clock::{actor_id, random_u64};
use crate::model::config_rules::{
    immediate_change, parse_documents, text_diff, v1alpha1, validate, yaml_stream,
};
use crate::model::core::Core;
use crate::model::scenario::parse_version;
use crate::model::state::ConfigTry;
use crate::node_life::node::{Sequence, spawn_reboot};
use taloscope_proto::machine::apply_configuration_request::Mode;
use taloscope_proto::machine::{ApplyConfiguration, ApplyConfigurationRequest};

/// `constants.ConfigTryTimeout` (pkg/machinery/constants/constants.go): a minute.
const CONFIG_TRY_TIMEOUT: Duration = Duration::from_secs(60);

/// How a node of one Talos minor applies configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generation {
    /// Up to v1.13: `CanApplyImmediate` decides whether a change needs a reboot; `REBOOT` and
    /// `AUTO` may reboot the node.
    ChecksReboot,
    /// From v1.14 ("feat: drop apply config method reboot", commit 995bc30d5): every change
    /// is applied without a reboot, `REBOOT` is refused and `AUTO` is answered `NO_REBOOT`.
    NeverReboots,
}

fn generation(t: &Target) -> Generation {
    let minor = parse_version(&t.node.status.borrow().talos_version)
        .map(|(major, minor, _)| (major, minor))
        .unwrap_or((1, 0));
    if minor >= (1, 14) {
        Generation::NeverReboots
    } else {
        Generation::ChecksReboot
    }
}

/// v1.12 and v1.13 refuse any apply while one in `REBOOT` mode reboots the node (the
/// `applyConfigRebooted` flag; v1.11 has none, v1.14 no longer reboots).
fn refuses_while_rebooting(t: &Target) -> bool {
    parse_version(&t.node.status.borrow().talos_version)
        .is_some_and(|(major, minor, _)| (major, minor) == (1, 12) || (major, minor) == (1, 13))
}

/// What the node decided to do with a configuration.
struct Decision {
    mode: Mode,
    details: String,
    /// `CanApplyImmediate`'s reason appended to the details of an `AUTO` that reboots.
    reboot_reason: String,
}

/// The mode a request ends up in and its details, or the refusal (v1alpha1_server.go, the
/// first `switch in.Mode`).
fn decide(
    generation: Generation,
    requested: Mode,
    immediate: impl Fn() -> Result<(), String>,
) -> Result<Decision, Status> {
    let decision = |mode, details: &str| Decision {
        mode,
        details: details.to_string(),
        reboot_reason: String::new(),
    };
    const WITHOUT: &str = "Applied configuration without a reboot";
    const WITH: &str = "Applied configuration with a reboot";
    const STAGED: &str = "Staged configuration to be applied after the next reboot";
    match (generation, requested) {
        (Generation::NeverReboots, Mode::Reboot) => Err(Status::unimplemented(
            "the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead",
        )),
        (Generation::NeverReboots, Mode::Auto | Mode::NoReboot) => {
            Ok(decision(Mode::NoReboot, WITHOUT))
        }
        (Generation::NeverReboots, Mode::Try) => Ok(decision(Mode::Try, WITHOUT)),
        (_, Mode::Staged) => Ok(decision(Mode::Staged, STAGED)),
        (Generation::ChecksReboot, Mode::Try | Mode::NoReboot) => {
            immediate().map_err(Status::invalid_argument)?;
            Ok(decision(requested, WITHOUT))
        }
        (Generation::ChecksReboot, Mode::Auto) => Ok(match immediate() {
            Ok(()) => decision(Mode::NoReboot, WITHOUT),
            Err(reason) => Decision {
                mode: Mode::Reboot,
                details: WITH.into(),
                reboot_reason: format!(": {reason}"),
            },
        }),
        (Generation::ChecksReboot, Mode::Reboot) => Ok(decision(Mode::Reboot, WITH)),
    }
}

/// The handler's body for one node.
pub(super) fn apply(
    core: &Arc<Core>,
    t: &Target,
    req: &ApplyConfigurationRequest,
) -> Result<ApplyConfiguration, Status> {
    if refuses_while_rebooting(t) && t.node.lock().apply_rebooting {
        return Err(Status::failed_precondition(
            "configuration was already applied and node is rebooting, cannot apply more configuration changes until next reboot",
        ));
    }
    let requested = Mode::try_from(req.mode).unwrap_or(Mode::Reboot);
    // Any apply but a TRY confirms a change on trial (`CancelConfigRollbackTimeout`).
    if requested != Mode::Try {
        t.node.lock().config_try = None;
    }
    let docs = parse_documents(&req.data)
        .map_err(|e| Status::invalid_argument(format!("decode error: {e}")))?;
    if docs.is_empty() {
        return Err(Status::invalid_argument("config not found"));
    }
    let Some(new_config) = v1alpha1(&docs) else {
        return Err(Status::invalid_argument(
            "the applied machine configuration doesn't contain v1alpha1 config, did you mean to patch the machine config instead?",
        ));
    };
    let generation = generation(t);
    if generation == Generation::NeverReboots && requested == Mode::Reboot {
        // Refused before the config is validated, as v1.14 does.
        decide(generation, requested, || Ok(()))?;
    }
    let warnings = validate(new_config).map_err(Status::invalid_argument)?;
    let running_text = crate::model::kube_components::current_config(&t.node);
    let running = parse_documents(running_text.as_bytes()).unwrap_or_default();
    let immediate = || match v1alpha1(&running) {
        Some(current) => immediate_change(current, new_config),
        None => Err("current config is not v1alpha1".to_string()),
    };
    let decision = decide(generation, requested, immediate)?;
    if req.dry_run {
        // `generateDiff`: pkg/machinery/config/configdiff DiffConfigs of the whole configs.
        let diff = text_diff(&yaml_stream(&running), &yaml_stream(&docs));
        let diff = if diff.is_empty() {
            "No changes.".to_string()
        } else {
            diff
        };
        return Ok(ApplyConfiguration {
            metadata: None,
            warnings: vec![],
            mode: decision.mode as i32,
            mode_details: format!(
                "Dry run summary:\n{} (skipped in dry-run).\nConfig diff:\n\n{diff}",
                decision.details
            ),
        });
    }
    let mut details = decision.details.clone();
    match decision.mode {
        Mode::Try => {
            let timeout = req
                .try_mode_timeout
                .and_then(|d| Duration::try_from(d).ok())
                .unwrap_or(CONFIG_TRY_TIMEOUT);
            details.push_str(&format!(
                "\nThe config is applied in 'try' mode and will be automatically reverted back in {}",
                go_duration(timeout)
            ));
            let id = random_u64();
            let previous = {
                let mut m = t.node.lock();
                let previous = m.applied_config.clone();
                m.config_try = Some(ConfigTry {
                    id,
                    previous: previous.clone(),
                });
                previous
            };
            run_now(core, t, &req.data, previous.as_deref());
            crate::node_life::config_rollback::spawn(core, &t.node, id, timeout);
        }
        Mode::NoReboot | Mode::Auto => {
            let previous = {
                let mut m = t.node.lock();
                m.staged_config = None;
                m.applied_config.clone()
            };
            run_now(core, t, &req.data, previous.as_deref());
        }
        Mode::Staged => {
            t.node.lock().staged_config = Some(req.data.clone());
        }
        Mode::Reboot => {
            {
                let mut m = t.node.lock();
                m.staged_config = Some(req.data.clone());
                m.apply_rebooting = true;
            }
            spawn_reboot(core, &t.cluster, &t.node, actor_id(), Sequence::Reboot);
        }
    }
    record(core, t, "MachineService.ApplyConfiguration");
    Ok(ApplyConfiguration {
        metadata: None,
        warnings,
        mode: decision.mode as i32,
        mode_details: details + &decision.reboot_reason,
    })
}

/// The configuration becomes the running one: components whose image or flags changed restart.
fn run_now(core: &Arc<Core>, t: &Target, data: &[u8], previous: Option<&[u8]>) {
    let before = match previous {
        Some(p) => p.to_vec(),
        None => crate::model::kube_components::current_config(&t.node).into_bytes(),
    };
    t.node.lock().applied_config = Some(data.to_vec());
    crate::node_life::component_restart::apply_config(core, &t.node, &before, data);
}

/// A duration as Go's `time.Duration.String` writes it (`1m0s`, `2m30s`, `1.5s`, `500ms`).
fn go_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".into();
    }
    if d < Duration::from_secs(1) {
        return format!("{}ms", d.as_millis());
    }
    let total = d.as_secs();
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    let millis = d.subsec_millis();
    let seconds = if millis == 0 {
        format!("{s}s")
    } else {
        format!("{}s", format!("{s}.{millis:03}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => seconds,
        (0, _) => format!("{m}m{seconds}"),
        _ => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
        assert_eq!(go_duration(Duration::from_secs(150)), "2m30s");
        assert_eq!(go_duration(Duration::from_secs(45)), "45s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
    }

    #[test]
    fn modes_per_generation() {
        let needs_reboot = || Err("this config change can't be applied in immediate mode".into());
        let refused = decide(Generation::ChecksReboot, Mode::NoReboot, needs_reboot)
            .err()
            .expect("refused");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        let auto = decide(Generation::ChecksReboot, Mode::Auto, needs_reboot).expect("auto");
        assert_eq!(auto.mode, Mode::Reboot);
        let v114 = decide(Generation::NeverReboots, Mode::Auto, needs_reboot).expect("auto");
        assert_eq!(v114.mode, Mode::NoReboot);
        let reboot = decide(Generation::NeverReboots, Mode::Reboot, || Ok(()));
        assert_eq!(
            reboot.err().map(|s| s.code()),
            Some(tonic::Code::Unimplemented)
        );
    }
}
