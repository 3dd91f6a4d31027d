//! The maintenance certificate fingerprints of a headless create: where the operator reads
//! them, the guard that wants each given (`--fingerprint VM=SHA256`) or pinning the first seen
//! acknowledged, and the flags read into a map by VM name.
use std::collections::BTreeMap;

use crate::guards::{Guard, GuardId};

use super::plan::{CreatePlan, Delivery};

/// The acknowledgement that lets a headless create pin each VM's maintenance certificate
/// fingerprint as it is first seen, with nobody comparing it.
pub const PIN_FINGERPRINTS_ACK: &str = "pin the fingerprints shown";

/// Where the operator reads a VM's maintenance certificate fingerprint: Talos logs it to the
/// console in maintenance mode ("server certificate issued", with the fingerprint:
/// siderolabs/talos `internal/app/machined/pkg/controllers/runtime/maintenance_service.go`).
pub const FINGERPRINT_SHOWN_AT: &str =
    "the VNC console in Sunstone shows it in the maintenance-mode banner";

/// A headless create's maintenance fingerprints (no guard for user-data delivery): nobody is
/// asked, so each VM's certificate is either the one `--fingerprint VM=SHA256` gives, or,
/// with [`PIN_FINGERPRINTS_ACK`], the one first seen.
pub fn headless_fingerprints(plan: &CreatePlan, given: &BTreeMap<String, String>) -> Option<Guard> {
    if plan.delivery != Delivery::Maintenance {
        return None;
    }
    let id = GuardId::MaintenanceFingerprints;
    let unnamed: Vec<&str> = plan
        .vms
        .iter()
        .map(|vm| vm.name.as_str())
        .filter(|name| !given.contains_key(*name))
        .collect();
    // OneFlow names its VMs itself: a plan without names cannot be covered by --fingerprint.
    if !plan.vms.is_empty() && unnamed.is_empty() {
        return Some(Guard::pass(
            id,
            "each VM's config goes only to the certificate --fingerprint gives for it",
        ));
    }
    let which = if plan.vms.is_empty() || unnamed.len() == plan.vms.len() {
        "no VM's".to_string()
    } else {
        format!("not the fingerprint of {}", unnamed.join(", "))
    };
    Some(
        Guard::warn(
            id,
            format!(
                "nobody confirms {which} maintenance certificate in a headless run ({FINGERPRINT_SHOWN_AT}): pass --fingerprint VM=SHA256 for each VM, or --ack \"{PIN_FINGERPRINTS_ACK}\" to pin each as first seen"
            ),
        )
        .acked_by(PIN_FINGERPRINTS_ACK),
    )
}

/// `--fingerprint VM=SHA256` flags as a map by VM name; a flag without `=`, with an empty side,
/// naming a VM twice or naming a VM the plan does not make is an error naming it.
pub fn given_fingerprints(
    plan: &CreatePlan,
    flags: &[String],
) -> Result<BTreeMap<String, String>, String> {
    let mut given = BTreeMap::new();
    for flag in flags {
        let Some((vm, fingerprint)) = flag
            .split_once('=')
            .map(|(vm, f)| (vm.trim(), f.trim()))
            .filter(|(vm, f)| !vm.is_empty() && !f.is_empty())
        else {
            return Err(format!(
                "--fingerprint {flag:?}: expected VM=SHA256 (the VM's name, then the fingerprint its maintenance banner shows)"
            ));
        };
        if !plan.vms.is_empty() && !plan.vms.iter().any(|v| v.name == vm) {
            let names: Vec<&str> = plan.vms.iter().map(|v| v.name.as_str()).collect();
            return Err(format!(
                "--fingerprint {flag:?}: {vm} is not a VM of this plan (its VMs: {})",
                names.join(", ")
            ));
        }
        if given
            .insert(vm.to_string(), fingerprint.to_string())
            .is_some()
        {
            return Err(format!("--fingerprint names {vm} twice"));
        }
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_lifecycle::guards::tests::plan;
    use crate::cluster_lifecycle::plan::EndpointChoice;
    use crate::guards::{Verdict, blocking};

    fn flags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_headless_run_pins_only_given_fingerprints_or_with_the_acknowledgement() {
        let p = plan(1, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
        let none = given_fingerprints(&p, &[]).unwrap();
        let g = headless_fingerprints(&p, &none).expect("a guard for maintenance delivery");
        assert_eq!(
            (g.id, g.verdict),
            (GuardId::MaintenanceFingerprints, Verdict::Warn)
        );
        for text in [
            "--fingerprint VM=SHA256",
            PIN_FINGERPRINTS_ACK,
            "VNC console in Sunstone",
        ] {
            assert!(g.reason.contains(text), "{text} in {}", g.reason);
        }
        assert!(blocking(std::slice::from_ref(&g), &[]));
        assert!(!blocking(&[g], &flags(&[PIN_FINGERPRINTS_ACK])));

        let some = given_fingerprints(&p, &flags(&["lab-controlplane-1=AAA"])).unwrap();
        let g = headless_fingerprints(&p, &some).unwrap();
        assert_eq!(g.verdict, Verdict::Warn);
        assert!(
            g.reason
                .contains("not the fingerprint of lab-worker-1, lab-worker-2"),
            "{}",
            g.reason
        );
        let all = given_fingerprints(
            &p,
            &flags(&[
                "lab-controlplane-1=AAA",
                "lab-worker-1 = BBB",
                "lab-worker-2=CCC",
            ]),
        )
        .unwrap();
        assert_eq!(all.get("lab-worker-1").map(String::as_str), Some("BBB"));
        let g = headless_fingerprints(&p, &all).unwrap();
        assert_eq!(g.verdict, Verdict::Pass, "{}", g.reason);

        let user_data = plan(1, Delivery::UserData, EndpointChoice::FirstControlPlane);
        assert_eq!(headless_fingerprints(&user_data, &none), None);
    }

    #[test]
    fn a_fingerprint_flag_must_name_a_planned_vm_once() {
        let p = plan(1, Delivery::Maintenance, EndpointChoice::FirstControlPlane);
        let e = given_fingerprints(&p, &flags(&["AAA"])).unwrap_err();
        assert!(e.contains("expected VM=SHA256"), "{e}");
        let e = given_fingerprints(&p, &flags(&["lab-cp-9=AAA"])).unwrap_err();
        assert!(
            e.contains("lab-cp-9 is not a VM of this plan") && e.contains("lab-controlplane-1"),
            "{e}"
        );
        let e = given_fingerprints(&p, &flags(&["lab-worker-1=A", "lab-worker-1=B"])).unwrap_err();
        assert!(e.contains("names lab-worker-1 twice"), "{e}");
    }
}
