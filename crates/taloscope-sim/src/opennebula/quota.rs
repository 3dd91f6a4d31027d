//! The sim's one OpenNebula user and its group as oned keeps them: `one.user.info` /
//! `one.group.info` documents with their VM quota and the default quotas (OpenNebula/one
//! src/um/User.cc `to_xml_extended`, share/doc/xsd/user.xsd and group.xsd), and the VM quota
//! check of `one.template.instantiate` with oned's refusal (src/um/Quota.cc `check_quota`).
use super::cloud::Cloud;
use super::template::Template;
use super::vm::VmState;
use super::xml;
use crate::model::scenario::VmQuotaSpec;

/// Who owns everything in the sim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    pub uid: i64,
    pub gid: i64,
    pub uname: String,
    pub gname: String,
}

impl Owner {
    /// oneadmin (uid 0) in group oneadmin (gid 0): held to no quota.
    pub fn oneadmin() -> Owner {
        Owner {
            uid: 0,
            gid: 0,
            uname: super::ONE_USER.into(),
            gname: "oneadmin".into(),
        }
    }

    /// A regular user, `tenant` (uid 2) in group `users` (gid 1, oned's default group).
    pub fn tenant() -> Owner {
        Owner {
            uid: 2,
            gid: 1,
            uname: "tenant".into(),
            gname: "users".into(),
        }
    }

    /// `<UID>…<GNAME>` as every owned object's document carries them.
    pub fn to_xml(&self) -> String {
        format!(
            "<UID>{}</UID><GID>{}</GID><UNAME>{}</UNAME><GNAME>{}</GNAME>",
            self.uid,
            self.gid,
            xml::escape(&self.uname),
            xml::escape(&self.gname)
        )
    }

    /// oned checks the quotas of neither oneadmin nor the oneadmin group (src/rm/api/
    /// SharedAPI.cc `quota_authorization`: `att.uid != UserPool::ONEADMIN_ID`).
    fn exempt(id: i64) -> bool {
        id == 0
    }
}

/// VM_METRICS in the order Quota.cc checks them (QuotaVirtualMachine.cc); the sim leaves
/// SYSTEM_DISK_SIZE and generic metrics out.
const METRICS: [&str; 6] = [
    "VMS",
    "RUNNING_VMS",
    "CPU",
    "RUNNING_CPU",
    "MEMORY",
    "RUNNING_MEMORY",
];

/// What one VM of `template` counts (instantiated without hold it runs, so the RUNNING_*
/// metrics too: src/vm/VirtualMachineTemplate.cc `update_quota_attributes` adds RUNNING_MEMORY,
/// RUNNING_CPU, RUNNING_VMS 1 and VMS 1 before src/rm/api/TemplateAPI.cc checks the quota).
fn request(template: &Template) -> [f64; 6] {
    let number = |name: &str| {
        template
            .get(name)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let (cpu, memory) = (number("CPU"), number("MEMORY"));
    [1.0, 1.0, cpu, cpu, memory, memory]
}

/// What the VMs that are not DONE use (every VM in the sim is the one user's). The sim's
/// states are PENDING, HOLD, ACTIVE and DONE; the first three count as running too
/// (src/vm/VirtualMachine.cc `get_quota_template`).
fn usage(cloud: &Cloud) -> [f64; 6] {
    let mut used = [0.0; 6];
    for vm in cloud.vms.values().filter(|v| v.state != VmState::Done) {
        for (u, r) in used.iter_mut().zip(request(&vm.template)) {
            *u += r;
        }
    }
    used
}

/// The user's limit of metric `i`: the scenario's, else -1 (the default quota).
fn user_limit(quota: Option<&VmQuotaSpec>, i: usize) -> f64 {
    let set = quota.and_then(|q| match METRICS[i] {
        "VMS" => q.vms,
        "CPU" => q.cpu,
        "MEMORY" => q.memory_mb,
        _ => None,
    });
    set.map_or(-1.0, |v| v as f64)
}

/// A float as oned writes one in a quota (`one_util::float_to_str`, and `ostream <<` in the
/// refusal): `10`, `2.5`.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        let text = format!("{v:.6}");
        text.trim_end_matches('0').to_string()
    }
}

/// `<VM_QUOTA><VM>…</VM></VM_QUOTA>` with `limits` and `used`.
fn vm_quota_xml(limits: &[f64; 6], used: &[f64; 6]) -> String {
    let mut out = String::from("<VM_QUOTA><VM>");
    // The XSD lists the elements alphabetically, as oned's template writes them.
    let mut order: Vec<usize> = (0..METRICS.len()).collect();
    order.sort_by_key(|i| METRICS[*i]);
    for i in order {
        let m = METRICS[i];
        out.push_str(&format!(
            "<{m}>{}</{m}><{m}_USED>{}</{m}_USED>",
            number(limits[i]),
            number(used[i])
        ));
    }
    out.push_str("</VM></VM_QUOTA>");
    out
}

/// Default quotas as a fresh oned has them: every limit unlimited (-2; Quota.cc, `is_default`).
fn default_quotas_xml(element: &str) -> String {
    format!(
        "<{element}><DATASTORE_QUOTA></DATASTORE_QUOTA><NETWORK_QUOTA></NETWORK_QUOTA>{}\
         <IMAGE_QUOTA></IMAGE_QUOTA></{element}>",
        vm_quota_xml(&[-2.0; 6], &[0.0; 6])
    )
}

/// `one.user.info` of the sim's user: User.cc `to_xml_extended` with its quotas and the
/// default user quotas.
pub(crate) fn user_xml(cloud: &Cloud) -> String {
    let o = &cloud.owner;
    let limits: [f64; 6] = std::array::from_fn(|i| user_limit(cloud.user_quota.as_ref(), i));
    format!(
        "<USER><ID>{}</ID><GID>{}</GID><GROUPS><ID>{}</ID></GROUPS><GNAME>{}</GNAME>\
         <NAME>{}</NAME><PASSWORD>{}</PASSWORD><AUTH_DRIVER>core</AUTH_DRIVER>\
         <ENABLED>1</ENABLED><LOGIN_TOKEN></LOGIN_TOKEN><TEMPLATE></TEMPLATE>\
         <DATASTORE_QUOTA></DATASTORE_QUOTA><NETWORK_QUOTA></NETWORK_QUOTA>{}\
         <IMAGE_QUOTA></IMAGE_QUOTA>{}</USER>",
        o.uid,
        o.gid,
        o.gid,
        xml::escape(&o.gname),
        xml::escape(&o.uname),
        // oned keeps the password's SHA-256; the sim shows no secret at all.
        "0".repeat(64),
        vm_quota_xml(&limits, &usage(cloud)),
        default_quotas_xml("DEFAULT_USER_QUOTAS")
    )
}

/// `one.group.info` of the user's group: its VM quota at the default (-1) and its usage.
pub(crate) fn group_xml(cloud: &Cloud) -> String {
    let o = &cloud.owner;
    format!(
        "<GROUP><ID>{}</ID><NAME>{}</NAME><TEMPLATE></TEMPLATE><USERS><ID>{}</ID></USERS>\
         <ADMINS></ADMINS><DATASTORE_QUOTA></DATASTORE_QUOTA><NETWORK_QUOTA></NETWORK_QUOTA>\
         {}<IMAGE_QUOTA></IMAGE_QUOTA>{}</GROUP>",
        o.gid,
        xml::escape(&o.gname),
        o.uid,
        vm_quota_xml(&[-1.0; 6], &usage(cloud)),
        default_quotas_xml("DEFAULT_GROUP_QUOTAS")
    )
}

/// Quota.cc `check_quota` for one VM of `template`, the user's quota first, then the group's
/// (whose limits are the unlimited default): `Err` carries oned's words, as
/// `user_quota_authorization` prefixes them ("user [2] limit of 8 reached for VMS quota in VM").
pub(crate) fn check(cloud: &Cloud, template: &Template) -> Result<(), String> {
    let o = &cloud.owner;
    if Owner::exempt(o.uid) {
        return Ok(());
    }
    let used = usage(cloud);
    for (i, asked) in request(template).into_iter().enumerate() {
        let limit = user_limit(cloud.user_quota.as_ref(), i);
        // -1: the default user quota, unlimited in the sim; -2: unlimited.
        if limit >= 0.0 && used[i] + asked > limit {
            return Err(format!(
                "user [{}] limit of {} reached for {} quota in VM",
                o.uid,
                number(limit),
                METRICS[i]
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_oned_writes_them() {
        assert_eq!(number(10.0), "10");
        assert_eq!(number(-2.0), "-2");
        assert_eq!(number(2.5), "2.5");
    }

    #[test]
    fn the_quota_document_lists_each_metric_with_its_usage() {
        let doc = vm_quota_xml(&[8.0, -1.0, -1.0, -1.0, -1.0, -1.0], &[5.0; 6]);
        assert!(
            doc.starts_with("<VM_QUOTA><VM><CPU>-1</CPU><CPU_USED>5</CPU_USED>"),
            "{doc}"
        );
        assert!(
            doc.contains("<VMS>8</VMS><VMS_USED>5</VMS_USED></VM>"),
            "{doc}"
        );
    }
}
