//! Whether the provider has room for the VMs a plan makes, one set of verdicts for a create and a
//! provision: each OneFlow role's VM count within its `min_vms` / `max_vms`, and the VMs' count,
//! CPU and MEMORY within the VM quota of the user and of its group, as oned checks them. Pure.
use crate::guards::{Guard, GuardId, Verdict};
use crate::opennebula::{Amount, QuotaHolder, QuotaMetric, TemplateInfo};

/// What planned VMs count against the VM quota. taloscope instantiates without hold, so each
/// counts against the RUNNING_* metrics too (OpenNebula/one src/vm/VirtualMachineTemplate.cc
/// `update_quota_attributes`, before src/rm/api/TemplateAPI.cc checks the quota).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmDemand {
    pub vms: u64,
    pub cpu: Amount,
    pub memory: Amount,
}

impl VmDemand {
    /// `count` VMs of `template`.
    pub fn of(template: &TemplateInfo, count: u64) -> VmDemand {
        VmDemand {
            vms: count,
            cpu: template.cpu.unwrap_or(Amount::ZERO).times(count),
            memory: template.memory.unwrap_or(Amount::ZERO).times(count),
        }
    }

    pub fn plus(self, other: VmDemand) -> VmDemand {
        VmDemand {
            vms: self.vms + other.vms,
            cpu: self.cpu.plus(other.cpu),
            memory: self.memory.plus(other.memory),
        }
    }

    fn need(&self, metric: QuotaMetric) -> Amount {
        match metric {
            QuotaMetric::Vms | QuotaMetric::RunningVms => Amount::whole(self.vms),
            QuotaMetric::Cpu | QuotaMetric::RunningCpu => self.cpu,
            QuotaMetric::Memory | QuotaMetric::RunningMemory => self.memory,
        }
    }
}

/// The VM quotas as the provider answered when the plan was made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaReading {
    pub holders: Vec<QuotaHolder>,
    /// What could not be read, in the operator's words.
    pub unreadable: Vec<String>,
}

/// A OneFlow role's VM count after the plan, against its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleBounds {
    pub role: String,
    pub vms: u64,
    pub min_vms: Option<u64>,
    pub max_vms: Option<u64>,
}

/// What the room verdicts look at, gathered by the planner from the provider's answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderRoom {
    pub roles: Vec<RoleBounds>,
    /// The quotas read and what the plan's VMs need (`None`: not asked, as for OneFlow).
    pub quotas: Option<(QuotaReading, VmDemand)>,
}

/// One verdict with its reason.
pub type Finding = (Verdict, String);

/// Every finding about `room`: each role, then the quotas.
pub fn room_findings(room: &ProviderRoom) -> Vec<Finding> {
    let roles = room.roles.iter().map(role_room);
    let quotas = room.quotas.iter().map(|(r, d)| quota_room(r, d));
    roles.chain(quotas).collect()
}

/// The worst verdict of `findings` and their reasons joined (`None`: no findings).
pub fn worst(findings: &[Finding]) -> Option<Finding> {
    let rank = |v: Verdict| match v {
        Verdict::Pass => 0,
        Verdict::Warn => 1,
        Verdict::Fail => 2,
    };
    let verdict = findings.iter().map(|f| f.0).max_by_key(|v| rank(*v))?;
    let reasons: Vec<&str> = findings.iter().map(|f| f.1.as_str()).collect();
    Some((verdict, reasons.join("; ")))
}

/// Guard `id` over `findings`, its reason led by what the provider `answered` (empty: nothing
/// to say first).
pub fn room_guard(id: GuardId, answered: &str, findings: &[Finding]) -> Guard {
    match worst(findings) {
        None => Guard::pass(id, answered),
        Some((verdict, reasons)) if answered.is_empty() => Guard::new(id, verdict, reasons),
        Some((verdict, reasons)) => Guard::new(id, verdict, format!("{answered}; {reasons}")),
    }
}

/// OneFlow refuses a service whose role has fewer VMs than `min_vms` or more than `max_vms`
/// (OpenNebula/one src/oca/ruby/opennebula/flow/service_template.rb `validate_vmvalues`), and
/// a scale past them leaves the service failed.
pub fn role_room(b: &RoleBounds) -> Finding {
    let role = &b.role;
    match (b.min_vms, b.max_vms) {
        (_, Some(max)) if b.vms > max => (
            Verdict::Fail,
            format!("role {role} would have {} VMs; its max_vms is {max}", b.vms),
        ),
        (Some(min), _) if b.vms < min => (
            Verdict::Fail,
            format!("role {role} would have {} VMs; its min_vms is {min}", b.vms),
        ),
        (_, Some(max)) => (
            Verdict::Pass,
            format!("role {role}: {} of at most {max} VMs", b.vms),
        ),
        (_, None) => (
            Verdict::Pass,
            format!("role {role}: {} VMs; it sets no max_vms", b.vms),
        ),
    }
}

/// oned refuses `one.template.instantiate` once a VM would take the user or its group past a
/// VM quota (src/um/Quota.cc `check_quota`: used + asked <= limit); oneadmin is not held to
/// quotas. A quota that could not be read is a warning.
pub fn quota_room(reading: &QuotaReading, demand: &VmDemand) -> Finding {
    let mut over = Vec::new();
    let mut fits = Vec::new();
    for holder in &reading.holders {
        let who = format!("{} {}", holder.kind.as_str(), holder.name);
        if holder.exempt() {
            fits.push(format!("{who}: not held to quotas"));
            continue;
        }
        let mut figures = Vec::new();
        for metric in QuotaMetric::ALL {
            let (Some(limit), used) = holder.effective(metric) else {
                continue;
            };
            let need = demand.need(metric);
            let unit = metric.unit();
            let name = metric.as_str();
            if used.plus(need) > limit {
                over.push(format!(
                    "{who}: {name} quota {limit}{unit}, {used}{unit} used, the plan needs {need}{unit}"
                ));
            } else {
                figures.push(format!("{name} {used}+{need} of {limit}{unit}"));
            }
        }
        fits.push(if figures.is_empty() {
            format!("{who}: no VM quota")
        } else {
            format!("{who}: {}", figures.join(", "))
        });
    }
    if !over.is_empty() {
        return (Verdict::Fail, over.join("; "));
    }
    if !reading.unreadable.is_empty() {
        let mut text = reading.unreadable.join("; ");
        text.push_str(": OpenNebula refuses VMs past a quota, so the run may stop halfway");
        if !fits.is_empty() {
            text = format!("{}; {text}", fits.join("; "));
        }
        return (Verdict::Warn, text);
    }
    (Verdict::Pass, fits.join("; "))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::opennebula::quota::{HolderKind, Limit, QuotaLine, VmQuota};

    pub(crate) fn holder(
        kind: HolderKind,
        id: i64,
        name: &str,
        lines: &[(QuotaMetric, u64, u64)],
    ) -> QuotaHolder {
        let lines = lines
            .iter()
            .map(|(metric, limit, used)| QuotaLine {
                metric: *metric,
                limit: Limit::At(Amount::whole(*limit)),
                used: Amount::whole(*used),
            })
            .collect();
        QuotaHolder {
            kind,
            id,
            name: name.into(),
            quota: Some(VmQuota { lines }),
            defaults: None,
        }
    }

    pub(crate) fn demand(vms: u64) -> VmDemand {
        VmDemand {
            vms,
            cpu: Amount::whole(2 * vms),
            memory: Amount::whole(2048 * vms),
        }
    }

    #[test]
    fn a_quota_too_small_fails_with_its_figures() {
        let reading = QuotaReading {
            holders: vec![
                holder(HolderKind::User, 5, "alice", &[(QuotaMetric::Vms, 10, 7)]),
                holder(
                    HolderKind::Group,
                    100,
                    "lab",
                    &[(QuotaMetric::Memory, 8192, 0)],
                ),
            ],
            unreadable: vec![],
        };
        let (v, reason) = quota_room(&reading, &demand(5));
        assert_eq!(v, Verdict::Fail);
        assert_eq!(
            reason,
            "user alice: VMS quota 10, 7 used, the plan needs 5; group lab: MEMORY quota 8192 MB, 0 MB used, the plan needs 10240 MB"
        );
        // Used + asked may reach the limit, not pass it (Quota.cc: `usage + asked <= limit`).
        let (v, reason) = quota_room(&reading, &demand(4));
        assert_eq!(v, Verdict::Fail, "{reason}");
        assert_eq!(reason, "user alice: VMS quota 10, 7 used, the plan needs 4");
        assert_eq!(quota_room(&reading, &demand(3)).0, Verdict::Pass);
        let (v, reason) = quota_room(&reading, &demand(2));
        assert_eq!(v, Verdict::Pass);
        assert_eq!(
            reason,
            "user alice: VMS 7+2 of 10; group lab: MEMORY 0+4096 of 8192 MB"
        );
    }

    #[test]
    fn oneadmin_is_not_held_and_an_unreadable_quota_warns() {
        let reading = QuotaReading {
            holders: vec![holder(
                HolderKind::User,
                0,
                "oneadmin",
                &[(QuotaMetric::Vms, 1, 1)],
            )],
            unreadable: vec!["group 1: cannot read its quota (not authorized)".into()],
        };
        let (v, reason) = quota_room(&reading, &demand(5));
        assert_eq!(v, Verdict::Warn);
        assert!(
            reason.starts_with("user oneadmin: not held to quotas; group 1: cannot read"),
            "{reason}"
        );
        let none = QuotaReading {
            holders: vec![holder(HolderKind::User, 5, "bob", &[])],
            unreadable: vec![],
        };
        assert_eq!(
            quota_room(&none, &demand(5)),
            (Verdict::Pass, "user bob: no VM quota".into())
        );
    }

    #[test]
    fn a_role_past_its_bounds_fails() {
        let b = |vms, min, max| RoleBounds {
            role: "worker".into(),
            vms,
            min_vms: min,
            max_vms: max,
        };
        let (v, reason) = role_room(&b(3, None, Some(2)));
        assert_eq!(v, Verdict::Fail);
        assert_eq!(reason, "role worker would have 3 VMs; its max_vms is 2");
        let (v, reason) = role_room(&b(1, Some(2), None));
        assert_eq!(v, Verdict::Fail);
        assert_eq!(reason, "role worker would have 1 VMs; its min_vms is 2");
        assert_eq!(role_room(&b(2, Some(1), Some(2))).0, Verdict::Pass);
        let room = ProviderRoom {
            roles: vec![b(2, None, None), b(3, None, Some(2))],
            quotas: None,
        };
        let (v, reason) = worst(&room_findings(&room)).unwrap();
        assert_eq!(v, Verdict::Fail);
        assert!(
            reason.starts_with("role worker: 2 VMs; it sets no max_vms; role worker would"),
            "{reason}"
        );
    }
}
