//! The maintenance-delivery half of a create run's Configured phase: the VM's certificate
//! fingerprint read, confirmed (or checked against the one confirmed before) and the config
//! applied pinned to it; a VM an earlier, killed run already configured is recognised.
use tokio::sync::oneshot;

use super::super::journal::CreatedVm;
use super::super::progress::{CreatePhase, PhaseState};
use super::super::steps::CreateSteps;
use super::{CreateRunner, FingerprintPolicy, FingerprintQuestion, Probe};

impl<S: CreateSteps> CreateRunner<S> {
    /// Reads the VM's maintenance fingerprint, has it confirmed (or checks it against the one
    /// confirmed before), then applies the config pinned to it. A VM whose fingerprint an
    /// earlier run confirmed may have been given its config before that run was killed: once
    /// its Talos answers with the cluster's credentials it is configured, and its maintenance
    /// API is gone for good (it installed and rebooted).
    pub(super) async fn apply_to(&mut self, vm: &CreatedVm) -> Result<(), String> {
        let steps = self.steps.clone();
        let earlier = vm.fingerprint.is_some();
        let seen = self
            .wait_for(CreatePhase::Configured, || {
                let steps = steps.clone();
                let vm = vm.clone();
                async move {
                    if earlier && steps.talos_answers(&vm).await == Ok(true) {
                        return Ok(Probe::Ready(None));
                    }
                    Ok(match steps.fingerprint(&vm).await {
                        // Another certificate than the one confirmed: either the VM installed
                        // its config and is rebooting into the cluster (its Talos answers with
                        // the cluster's credentials soon), or it is not the machine confirmed.
                        // Nothing is applied to it; the phase's bound ends the wait.
                        Ok(f) if vm.fingerprint.as_ref().is_some_and(|c| *c != f) => {
                            Probe::NotYet(mismatch(&vm, &f))
                        }
                        Ok(f) => Probe::Ready(Some(f)),
                        Err(e) => Probe::NotYet(format!("{}: maintenance API: {e}", vm.name)),
                    })
                }
            })
            .await?;
        let address = vm.ip.clone().unwrap_or_default();
        let Some(seen) = seen else {
            self.note(format!(
                "{} ({address}): configured by an earlier run (its Talos answers with the cluster's credentials)",
                vm.name
            ))
            .await;
            return Ok(());
        };
        match &vm.fingerprint {
            Some(confirmed) if *confirmed != seen => {
                return Err(mismatch(vm, &seen));
            }
            Some(_) => {}
            None => {
                self.confirm_fingerprint(vm, &address, &seen).await?;
                self.journal
                    .update(|r| {
                        if let Some(v) = r.vms.iter_mut().find(|v| v.id == vm.id) {
                            v.fingerprint = Some(seen.clone());
                        }
                    })
                    .map_err(|e| e.to_string())?;
            }
        }
        self.steps.apply_config(vm, &seen).await?;
        self.note(format!("{} ({address}): config applied", vm.name))
            .await;
        Ok(())
    }

    async fn confirm_fingerprint(
        &self,
        vm: &CreatedVm,
        address: &str,
        fingerprint: &str,
    ) -> Result<(), String> {
        let shown = format!(
            "{} ({address}): maintenance certificate fingerprint {fingerprint}",
            vm.name
        );
        self.note(shown).await;
        let ask = match &self.fingerprints {
            FingerprintPolicy::PinFirstSeen => return Ok(()),
            FingerprintPolicy::Given {
                fingerprints,
                pin_unnamed,
            } => return given(vm, address, fingerprint, fingerprints, *pin_unnamed),
            FingerprintPolicy::Ask(ask) => ask,
        };
        let (tx, rx) = oneshot::channel();
        let question = FingerprintQuestion {
            vm: vm.name.clone(),
            address: address.to_string(),
            fingerprint: fingerprint.to_string(),
            answer: tx,
        };
        let refused = || format!("the fingerprint of {} was not confirmed", vm.name);
        let waiting = format!("{}: its certificate fingerprint to confirm", vm.name);
        self.phase_state(CreatePhase::Configured, PhaseState::Waiting(waiting))
            .await;
        ask.send(question).await.map_err(|_| refused())?;
        match rx.await {
            Ok(true) => Ok(()),
            _ => Err(refused()),
        }
    }
}

/// The headless check of `--fingerprint VM=SHA256`: the VM's certificate is the one given
/// for it, or (not named) taken as first seen when the acknowledgement allows it.
fn given(
    vm: &CreatedVm,
    address: &str,
    seen: &str,
    fingerprints: &std::collections::BTreeMap<String, String>,
    pin_unnamed: bool,
) -> Result<(), String> {
    match fingerprints.get(&vm.name) {
        Some(expected) if expected == seen => Ok(()),
        Some(expected) => Err(format!(
            "{} ({address}) shows certificate fingerprint {seen}, not the {expected} given with --fingerprint: not applying the config",
            vm.name
        )),
        None if pin_unnamed => Ok(()),
        None => Err(format!(
            "{} ({address}) shows certificate fingerprint {seen}, and no --fingerprint names {}: not applying the config",
            vm.name, vm.name
        )),
    }
}

/// Why a VM that shows another certificate than the one confirmed gets no config.
fn mismatch(vm: &CreatedVm, seen: &str) -> String {
    format!(
        "{} ({}) now shows certificate fingerprint {seen}, not the {} confirmed before: not applying the config",
        vm.name,
        vm.ip.as_deref().unwrap_or_default(),
        vm.fingerprint.as_deref().unwrap_or_default()
    )
}
