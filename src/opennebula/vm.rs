//! VMs as OpenNebula describes them: the `<VM>` document (and `<VM_POOL>`)
//! decoded into [`VmInfo`], with STATE and LCM_STATE by name
//! (`include/VirtualMachine.h`) and the IPs of its NICs.
use std::fmt;

use serde::Serialize;

use super::xml::Element;

const VM_STATES: [&str; 12] = [
    "INIT",
    "PENDING",
    "HOLD",
    "ACTIVE",
    "STOPPED",
    "SUSPENDED",
    "DONE",
    "FAILED",
    "POWEROFF",
    "UNDEPLOYED",
    "CLONING",
    "CLONING_FAILURE",
];

const LCM_STATES: [&str; 72] = [
    "LCM_INIT",
    "PROLOG",
    "BOOT",
    "RUNNING",
    "MIGRATE",
    "SAVE_STOP",
    "SAVE_SUSPEND",
    "SAVE_MIGRATE",
    "PROLOG_MIGRATE",
    "PROLOG_RESUME",
    "EPILOG_STOP",
    "EPILOG",
    "SHUTDOWN",
    "CANCEL",
    "FAILURE",
    "CLEANUP_RESUBMIT",
    "UNKNOWN",
    "HOTPLUG",
    "SHUTDOWN_POWEROFF",
    "BOOT_UNKNOWN",
    "BOOT_POWEROFF",
    "BOOT_SUSPENDED",
    "BOOT_STOPPED",
    "CLEANUP_DELETE",
    "HOTPLUG_SNAPSHOT",
    "HOTPLUG_NIC",
    "HOTPLUG_SAVEAS",
    "HOTPLUG_SAVEAS_POWEROFF",
    "HOTPLUG_SAVEAS_SUSPENDED",
    "SHUTDOWN_UNDEPLOY",
    "EPILOG_UNDEPLOY",
    "PROLOG_UNDEPLOY",
    "BOOT_UNDEPLOY",
    "HOTPLUG_PROLOG_POWEROFF",
    "HOTPLUG_EPILOG_POWEROFF",
    "BOOT_MIGRATE",
    "BOOT_FAILURE",
    "BOOT_MIGRATE_FAILURE",
    "PROLOG_MIGRATE_FAILURE",
    "PROLOG_FAILURE",
    "EPILOG_FAILURE",
    "EPILOG_STOP_FAILURE",
    "EPILOG_UNDEPLOY_FAILURE",
    "PROLOG_MIGRATE_POWEROFF",
    "PROLOG_MIGRATE_POWEROFF_FAILURE",
    "PROLOG_MIGRATE_SUSPEND",
    "PROLOG_MIGRATE_SUSPEND_FAILURE",
    "BOOT_UNDEPLOY_FAILURE",
    "BOOT_STOPPED_FAILURE",
    "PROLOG_RESUME_FAILURE",
    "PROLOG_UNDEPLOY_FAILURE",
    "DISK_SNAPSHOT_POWEROFF",
    "DISK_SNAPSHOT_REVERT_POWEROFF",
    "DISK_SNAPSHOT_DELETE_POWEROFF",
    "DISK_SNAPSHOT_SUSPENDED",
    "DISK_SNAPSHOT_REVERT_SUSPENDED",
    "DISK_SNAPSHOT_DELETE_SUSPENDED",
    "DISK_SNAPSHOT",
    "DISK_SNAPSHOT_REVERT",
    "DISK_SNAPSHOT_DELETE",
    "PROLOG_MIGRATE_UNKNOWN",
    "PROLOG_MIGRATE_UNKNOWN_FAILURE",
    "DISK_RESIZE",
    "DISK_RESIZE_POWEROFF",
    "DISK_RESIZE_UNDEPLOYED",
    "HOTPLUG_NIC_POWEROFF",
    "HOTPLUG_RESIZE",
    "HOTPLUG_SAVEAS_UNDEPLOYED",
    "HOTPLUG_SAVEAS_STOPPED",
    "BACKUP",
    "BACKUP_POWEROFF",
    "RESTORE",
];

/// A VM's `STATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmState(pub u32);

impl VmState {
    pub const PENDING: VmState = VmState(1);
    pub const HOLD: VmState = VmState(2);
    pub const ACTIVE: VmState = VmState(3);
    pub const DONE: VmState = VmState(6);
    pub const POWEROFF: VmState = VmState(8);
    pub const CLONING_FAILURE: VmState = VmState(11);

    pub fn name(self) -> String {
        VM_STATES
            .get(self.0 as usize)
            .map_or_else(|| format!("STATE_{}", self.0), |s| s.to_string())
    }
}

/// A VM's `LCM_STATE` (meaningful only while STATE is ACTIVE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcmState(pub u32);

impl LcmState {
    pub const LCM_INIT: LcmState = LcmState(0);
    pub const PROLOG: LcmState = LcmState(1);
    pub const BOOT: LcmState = LcmState(2);
    pub const RUNNING: LcmState = LcmState(3);
    pub const UNKNOWN: LcmState = LcmState(16);
    pub const BOOT_FAILURE: LcmState = LcmState(36);
    pub const PROLOG_FAILURE: LcmState = LcmState(39);

    pub fn name(self) -> String {
        LCM_STATES
            .get(self.0 as usize)
            .map_or_else(|| format!("LCM_{}", self.0), |s| s.to_string())
    }

    /// Any `*_FAILURE` state: the VM will not get further on its own.
    pub fn is_failure(self) -> bool {
        LCM_STATES
            .get(self.0 as usize)
            .is_some_and(|s| s.ends_with("_FAILURE"))
    }
}

macro_rules! serialize_by_name {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.name())
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.name())
            }
        }
    };
}
serialize_by_name!(VmState);
serialize_by_name!(LcmState);

/// One VM as the provision runner follows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmInfo {
    pub id: u64,
    pub name: String,
    pub state: VmState,
    pub lcm_state: LcmState,
    /// IPv4 (else IPv6) of each NIC, in NIC_ID order.
    pub ips: Vec<String>,
    pub template_id: Option<u64>,
}

impl VmInfo {
    /// The node's address: the first NIC's IP.
    pub fn ip(&self) -> Option<&str> {
        self.ips.first().map(String::as_str)
    }

    /// `ACTIVE/RUNNING`, `PENDING`, `ACTIVE/BOOT_FAILURE`…
    pub fn state_label(&self) -> String {
        if self.state == VmState::ACTIVE {
            self.lcm_state.name()
        } else {
            self.state.name()
        }
    }

    /// Why the VM will not come up by itself, if it will not.
    pub fn failure(&self) -> Option<String> {
        if self.state == VmState::ACTIVE && self.lcm_state.is_failure() {
            Some(format!("VM {} is in {}", self.id, self.lcm_state.name()))
        } else if self.state == VmState::CLONING_FAILURE {
            Some(format!("VM {} is in CLONING_FAILURE", self.id))
        } else if self.state == VmState::DONE {
            Some(format!("VM {} is DONE (terminated)", self.id))
        } else {
            None
        }
    }

    pub fn is_running(&self) -> bool {
        self.state == VmState::ACTIVE && self.lcm_state == LcmState::RUNNING
    }

    /// Decodes a `<VM>` element; every field is optional but the ID.
    pub fn from_element(vm: &Element) -> Result<VmInfo, String> {
        let id = vm
            .child_text("ID")
            .and_then(|t| t.parse().ok())
            .ok_or("<VM> without a numeric <ID>")?;
        let number = |name: &str| vm.child_text(name).and_then(|t| t.parse::<u32>().ok());
        let mut nics: Vec<(u64, String)> = vm
            .child("TEMPLATE")
            .into_iter()
            .flat_map(|t| t.children_named("NIC"))
            .filter_map(|nic| {
                let ip = nic
                    .child_text("IP")
                    .filter(|s| !s.is_empty())
                    .or_else(|| nic.child_text("IP6_GLOBAL").filter(|s| !s.is_empty()))
                    .or_else(|| nic.child_text("IP6").filter(|s| !s.is_empty()))?;
                let nic_id = nic
                    .child_text("NIC_ID")
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(u64::MAX);
                Some((nic_id, ip.to_string()))
            })
            .collect();
        nics.sort_by_key(|(id, _)| *id);
        Ok(VmInfo {
            id,
            name: vm.child_text("NAME").unwrap_or_default().to_string(),
            state: VmState(number("STATE").unwrap_or(0)),
            lcm_state: LcmState(number("LCM_STATE").unwrap_or(0)),
            ips: nics.into_iter().map(|(_, ip)| ip).collect(),
            template_id: vm
                .path("TEMPLATE/TEMPLATE_ID")
                .and_then(|t| t.text.trim().parse().ok()),
        })
    }
}

/// Decodes a `<VM_POOL>` element; VMs that cannot be decoded are skipped.
pub fn vms_from_pool(pool: &Element) -> Vec<VmInfo> {
    pool.children_named("VM")
        .filter_map(|vm| VmInfo::from_element(vm).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opennebula::xml;

    #[test]
    fn vm_document_decodes_states_and_nics() {
        let doc = "<VM><ID>12</ID><NAME><![CDATA[healthy-worker-3]]></NAME>\
            <STATE>3</STATE><LCM_STATE>36</LCM_STATE>\
            <TEMPLATE><NIC><NIC_ID>1</NIC_ID><IP>10.0.0.2</IP></NIC>\
            <NIC><NIC_ID>0</NIC_ID><IP><![CDATA[127.10.1.21]]></IP></NIC>\
            <TEMPLATE_ID>4</TEMPLATE_ID></TEMPLATE></VM>";
        let vm = VmInfo::from_element(&xml::parse(doc).unwrap()).unwrap();
        assert_eq!(vm.id, 12);
        assert_eq!(vm.name, "healthy-worker-3");
        assert_eq!(vm.ip(), Some("127.10.1.21"));
        assert_eq!(vm.state_label(), "BOOT_FAILURE");
        assert!(vm.failure().unwrap().contains("BOOT_FAILURE"));
        assert_eq!(vm.template_id, Some(4));
        assert_eq!(
            serde_json::to_string(&vm.state).unwrap(),
            "\"ACTIVE\"".to_string()
        );
    }

    #[test]
    fn state_names() {
        assert_eq!(VmState(1).name(), "PENDING");
        assert_eq!(VmState(99).name(), "STATE_99");
        assert_eq!(LcmState(3).name(), "RUNNING");
        assert_eq!(LcmState(39).name(), "PROLOG_FAILURE");
        assert_eq!(LcmState(71).name(), "RESTORE");
        assert!(LcmState(61).is_failure());
        assert!(!LcmState(2).is_failure());
        assert!(!LcmState(500).is_failure());
    }

    #[test]
    fn pending_vm_has_no_failure_and_pool_skips_bad_entries() {
        let pool = xml::parse(
            "<VM_POOL><VM><ID>1</ID><STATE>1</STATE><LCM_STATE>0</LCM_STATE></VM><VM><NAME>x</NAME></VM></VM_POOL>",
        )
        .unwrap();
        let vms = vms_from_pool(&pool);
        assert_eq!(vms.len(), 1);
        assert_eq!(vms[0].state_label(), "PENDING");
        assert!(vms[0].failure().is_none());
        assert!(vms[0].ip().is_none());
    }
}
