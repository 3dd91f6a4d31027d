//! VM quotas as oned reports them: the `VM_QUOTA` of `one.user.info` / `one.group.info` (id -1:
//! the caller's own) with the `DEFAULT_USER_QUOTAS` / `DEFAULT_GROUP_QUOTAS` a limit of -1 stands
//! for (OpenNebula/one share/doc/xsd/user.xsd, group.xsd, shared.xsd; src/um/Quota.cc).
use std::fmt;

use super::xml::Element;

/// A quantity of a quota in thousandths (CPU is fractional: `0.5`), so figures compare exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Amount(u64);

impl Amount {
    pub const ZERO: Amount = Amount(0);

    pub fn whole(n: u64) -> Amount {
        Amount(n.saturating_mul(1000))
    }

    /// A non-negative finite number as OpenNebula writes it (`2`, `0.5`, `4096`).
    pub fn parse(text: &str) -> Option<Amount> {
        let v: f64 = text.trim().parse().ok()?;
        (v.is_finite() && v >= 0.0).then(|| Amount((v * 1000.0).round() as u64))
    }

    pub fn plus(self, other: Amount) -> Amount {
        Amount(self.0.saturating_add(other.0))
    }

    pub fn times(self, n: u64) -> Amount {
        Amount(self.0.saturating_mul(n))
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, frac) = (self.0 / 1000, self.0 % 1000);
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let frac = format!("{frac:03}");
            write!(f, "{whole}.{}", frac.trim_end_matches('0'))
        }
    }
}

/// The VM quota metrics a VM from a template uses (QuotaVirtualMachine.cc `VM_METRICS`;
/// SYSTEM_DISK_SIZE and generic metrics are not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QuotaMetric {
    Vms,
    Cpu,
    Memory,
    RunningVms,
    RunningCpu,
    RunningMemory,
}

impl QuotaMetric {
    pub const ALL: [QuotaMetric; 6] = [
        QuotaMetric::Vms,
        QuotaMetric::Cpu,
        QuotaMetric::Memory,
        QuotaMetric::RunningVms,
        QuotaMetric::RunningCpu,
        QuotaMetric::RunningMemory,
    ];

    /// The element name in `VM_QUOTA/VM` (its usage is `<NAME>_USED`).
    pub fn as_str(self) -> &'static str {
        match self {
            QuotaMetric::Vms => "VMS",
            QuotaMetric::Cpu => "CPU",
            QuotaMetric::Memory => "MEMORY",
            QuotaMetric::RunningVms => "RUNNING_VMS",
            QuotaMetric::RunningCpu => "RUNNING_CPU",
            QuotaMetric::RunningMemory => "RUNNING_MEMORY",
        }
    }

    /// The unit figures of the metric are printed with.
    pub fn unit(self) -> &'static str {
        match self {
            QuotaMetric::Memory | QuotaMetric::RunningMemory => " MB",
            _ => "",
        }
    }
}

/// A limit as oned keeps it: `-1` the default quota, `-2` unlimited (Quota.cc `DEFAULT`,
/// `UNLIMITED`), else a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Default,
    Unlimited,
    At(Amount),
}

impl Limit {
    fn parse(text: &str) -> Option<Limit> {
        match text.trim() {
            "-1" | "-1.0" => Some(Limit::Default),
            "-2" | "-2.0" => Some(Limit::Unlimited),
            other => Amount::parse(other).map(Limit::At),
        }
    }
}

/// One metric of a `VM_QUOTA/VM` element: its limit and what is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaLine {
    pub metric: QuotaMetric,
    pub limit: Limit,
    pub used: Amount,
}

/// The `VM_QUOTA/VM` that applies everywhere (one without `CLUSTER_IDS`, which later releases
/// add for per-cluster quotas); metrics it does not carry are absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmQuota {
    pub lines: Vec<QuotaLine>,
}

impl VmQuota {
    /// From an element holding `VM_QUOTA`; `None` when it has no global `VM` entry (oned
    /// writes none until the quota is set or used).
    fn within(parent: &Element) -> Result<Option<VmQuota>, String> {
        let Some(vm) = parent.child("VM_QUOTA").and_then(|q| {
            q.children_named("VM")
                .find(|vm| vm.child_text("CLUSTER_IDS").is_none_or(str::is_empty))
        }) else {
            return Ok(None);
        };
        let mut lines = Vec::new();
        for metric in QuotaMetric::ALL {
            let Some(limit) = vm.child_text(metric.as_str()) else {
                continue;
            };
            let bad = |what: &str, text: &str| {
                format!(
                    "VM_QUOTA {}{what} is not a number: {text:?}",
                    metric.as_str()
                )
            };
            let limit = Limit::parse(limit).ok_or_else(|| bad("", limit))?;
            let used_name = format!("{}_USED", metric.as_str());
            let used_text = vm.child_text(&used_name).unwrap_or("0");
            let used = Amount::parse(used_text).ok_or_else(|| bad("_USED", used_text))?;
            lines.push(QuotaLine {
                metric,
                limit,
                used,
            });
        }
        Ok(Some(VmQuota { lines }))
    }

    pub fn line(&self, metric: QuotaMetric) -> Option<&QuotaLine> {
        self.lines.iter().find(|l| l.metric == metric)
    }
}

/// Whose quota it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HolderKind {
    User,
    Group,
}

impl HolderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HolderKind::User => "user",
            HolderKind::Group => "group",
        }
    }
}

/// A user's or a group's VM quota with the default quota its `-1` limits stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaHolder {
    pub kind: HolderKind,
    pub id: i64,
    pub name: String,
    pub quota: Option<VmQuota>,
    pub defaults: Option<VmQuota>,
}

impl QuotaHolder {
    /// oned checks no quota of the oneadmin user or group (id 0; src/rm/api/SharedAPI.cc
    /// `quota_authorization`: `att.uid != UserPool::ONEADMIN_ID`).
    pub fn exempt(&self) -> bool {
        self.id == 0
    }

    /// The limit that holds for `metric` (`None`: unlimited) and what is used, as Quota.cc
    /// `check_quota` resolves them: -1 takes the default quota's limit, a missing default is
    /// unlimited.
    pub fn effective(&self, metric: QuotaMetric) -> (Option<Amount>, Amount) {
        let own = self.quota.as_ref().and_then(|q| q.line(metric));
        let used = own.map_or(Amount::ZERO, |l| l.used);
        let default = || {
            self.defaults
                .as_ref()
                .and_then(|d| d.line(metric))
                .map_or(Limit::Unlimited, |l| l.limit)
        };
        let limit = match own.map_or(Limit::Default, |l| l.limit) {
            Limit::Default => default(),
            other => other,
        };
        match limit {
            Limit::At(a) => (Some(a), used),
            Limit::Default | Limit::Unlimited => (None, used),
        }
    }

    /// `<USER>` of `one.user.info` with its `DEFAULT_USER_QUOTAS`; also returns the user's
    /// primary group id (`GID`).
    pub fn from_user(user: &Element) -> Result<(QuotaHolder, i64), String> {
        let gid = int_child(user, "GID", "<USER>")?;
        let holder = QuotaHolder::decode(user, HolderKind::User, "DEFAULT_USER_QUOTAS")?;
        Ok((holder, gid))
    }

    /// `<GROUP>` of `one.group.info` with its `DEFAULT_GROUP_QUOTAS`.
    pub fn from_group(group: &Element) -> Result<QuotaHolder, String> {
        QuotaHolder::decode(group, HolderKind::Group, "DEFAULT_GROUP_QUOTAS")
    }

    fn decode(e: &Element, kind: HolderKind, defaults: &str) -> Result<QuotaHolder, String> {
        let root = format!("<{}>", e.name);
        Ok(QuotaHolder {
            kind,
            id: int_child(e, "ID", &root)?,
            name: e.child_text("NAME").unwrap_or_default().to_string(),
            quota: VmQuota::within(e)?,
            defaults: match e.child(defaults) {
                Some(d) => VmQuota::within(d)?,
                None => None,
            },
        })
    }
}

fn int_child(e: &Element, name: &str, root: &str) -> Result<i64, String> {
    e.child_text(name)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{root} without a numeric <{name}>"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opennebula::xml;

    const USER: &str = "<USER><ID>5</ID><GID>100</GID><GROUPS><ID>100</ID></GROUPS>\
        <GNAME>lab</GNAME><NAME>alice</NAME><PASSWORD>x</PASSWORD><TEMPLATE/>\
        <VM_QUOTA><VM><CLUSTER_IDS>3</CLUSTER_IDS><VMS>1</VMS><VMS_USED>0</VMS_USED></VM>\
        <VM><CPU><![CDATA[-1]]></CPU><CPU_USED>2.5</CPU_USED><MEMORY>-2</MEMORY>\
        <MEMORY_USED>4096</MEMORY_USED><VMS>10</VMS><VMS_USED>7</VMS_USED></VM></VM_QUOTA>\
        <DEFAULT_USER_QUOTAS><VM_QUOTA><VM><CPU>16</CPU><CPU_USED>0</CPU_USED>\
        <VMS>-2</VMS><VMS_USED>0</VMS_USED></VM></VM_QUOTA></DEFAULT_USER_QUOTAS></USER>";

    #[test]
    fn a_users_quota_resolves_default_and_unlimited_limits() {
        let (user, gid) = QuotaHolder::from_user(&xml::parse(USER).unwrap()).unwrap();
        assert_eq!((user.id, gid, user.name.as_str()), (5, 100, "alice"));
        let vms = user.effective(QuotaMetric::Vms);
        assert_eq!(vms, (Some(Amount::whole(10)), Amount::whole(7)));
        // CPU -1: the default quota's 16.
        let cpu = user.effective(QuotaMetric::Cpu);
        assert_eq!(cpu.0, Some(Amount::whole(16)));
        assert_eq!(cpu.1.to_string(), "2.5");
        assert_eq!(user.effective(QuotaMetric::Memory).0, None, "-2: unlimited");
        // Not in the quota, not in the defaults: unlimited.
        assert_eq!(user.effective(QuotaMetric::RunningVms).0, None);
        assert!(!user.exempt());
    }

    #[test]
    fn bad_figures_and_missing_ids_are_errors() {
        let bad = USER.replace("<VMS_USED>7</VMS_USED>", "<VMS_USED>seven</VMS_USED>");
        let err = QuotaHolder::from_user(&xml::parse(&bad).unwrap()).unwrap_err();
        assert!(err.contains("VMS_USED is not a number"), "{err}");
        let err = QuotaHolder::from_group(&xml::parse("<GROUP><NAME>g</NAME></GROUP>").unwrap())
            .unwrap_err();
        assert!(err.contains("<GROUP> without a numeric <ID>"), "{err}");
    }

    #[test]
    fn amounts_print_as_opennebula_writes_them() {
        assert_eq!(Amount::parse("4096").unwrap().to_string(), "4096");
        assert_eq!(Amount::parse("0.25").unwrap().times(3).to_string(), "0.75");
        assert_eq!(Amount::parse("-1"), None);
        assert_eq!(Amount::parse("NaN"), None);
    }
}
