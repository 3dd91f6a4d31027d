//! Simulated OpenNebula objects: VM templates and VMs with their STATE / LCM_STATE numbers
//! (`include/VirtualMachine.h`), and the XML documents oned returns for them
//! (`<VM>`, `<VM_POOL>`, `<VMTEMPLATE>`, `<VMTEMPLATE_POOL>`).
use std::net::Ipv4Addr;

use super::quota::Owner;
use super::template::Template;
use super::xml;

/// `VmState`, the values the sim uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VmState {
    Pending = 1,
    Hold = 2,
    Active = 3,
    Done = 6,
}

impl VmState {
    /// oned's name for the state (`VirtualMachine::vm_state_to_str`, OpenNebula/one
    /// `src/vm/VirtualMachine.cc`).
    fn name(self) -> &'static str {
        match self {
            VmState::Pending => "PENDING",
            VmState::Hold => "HOLD",
            VmState::Active => "ACTIVE",
            VmState::Done => "DONE",
        }
    }
}

/// `LcmState`, the values the sim uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lcm {
    Init = 0,
    Prolog = 1,
    Boot = 2,
    Running = 3,
    Epilog = 11,
    Shutdown = 12,
    BootFailure = 36,
    PrologFailure = 39,
}

impl Lcm {
    /// oned's name for the life-cycle state (`VirtualMachine::lcm_state_to_str`,
    /// OpenNebula/one `src/vm/VirtualMachine.cc`).
    fn name(self) -> &'static str {
        match self {
            Lcm::Init => "LCM_INIT",
            Lcm::Prolog => "PROLOG",
            Lcm::Boot => "BOOT",
            Lcm::Running => "RUNNING",
            Lcm::Epilog => "EPILOG",
            Lcm::Shutdown => "SHUTDOWN",
            Lcm::BootFailure => "BOOT_FAILURE",
            Lcm::PrologFailure => "PROLOG_FAILURE",
        }
    }

    /// The failure a template's `TALOSCOPE_SIM_FAILURE` attribute asks for.
    pub fn failure_named(name: &str) -> Option<Lcm> {
        match name.trim().to_ascii_uppercase().as_str() {
            "BOOT_FAILURE" | "BOOT" => Some(Lcm::BootFailure),
            "PROLOG_FAILURE" | "PROLOG" => Some(Lcm::PrologFailure),
            _ => None,
        }
    }

    pub fn is_failure(self) -> bool {
        matches!(self, Lcm::BootFailure | Lcm::PrologFailure)
    }
}

/// A VM template.
#[derive(Clone, Debug)]
pub(crate) struct VmTemplate {
    pub id: i64,
    pub name: String,
    pub regtime: i64,
    /// Index of the sim cluster whose network the template's NIC is on.
    pub cluster: usize,
    pub template: Template,
}

/// What a VM becomes once Talos boots on it: a node of a sim cluster.
#[derive(Clone, Debug)]
pub(crate) struct JoinPlan {
    pub cluster: String,
    pub spec: crate::model::scenario::NodeSpec,
}

/// What Talos on a VM does once the VM runs.
#[derive(Clone, Debug)]
pub(crate) enum Boot {
    /// Joins a cluster the sim started with, with the fleet's PKI.
    Join(JoinPlan),
    /// Boots the Talos image: with the machine config from USER_DATA, or (none) into
    /// maintenance mode; then installs, reboots and forms or joins the config's cluster.
    Image(Option<Box<super::machine_config::BootsAs>>),
}

/// A VM.
#[derive(Clone, Debug)]
pub(crate) struct Vm {
    pub id: i64,
    pub name: String,
    pub owner: Owner,
    pub state: VmState,
    pub lcm: Lcm,
    pub prev_state: VmState,
    pub prev_lcm: Lcm,
    pub stime: i64,
    pub etime: i64,
    pub template: Template,
    pub user_template: Template,
    pub ip: Ipv4Addr,
    /// The failure the VM runs into, if its template asked for one.
    pub failure: Option<Lcm>,
    /// What Talos on this VM does once the VM runs.
    pub boot: Option<Boot>,
    /// The Talos node answers on `ip` (joined, or a node the sim started with).
    pub talos_up: bool,
    /// Bumped on every transition; a scheduled step for an older epoch is stale.
    pub epoch: u64,
}

impl Vm {
    pub fn set_state(&mut self, state: VmState, lcm: Lcm) {
        self.prev_state = self.state;
        self.prev_lcm = self.lcm;
        self.state = state;
        self.lcm = lcm;
        self.epoch += 1;
    }

    /// The name oned puts in "not available for state" messages: the life-cycle state's
    /// name while ACTIVE, else the state's (`VirtualMachine::state_str`,
    /// OpenNebula/one `include/VirtualMachine.h`).
    pub fn state_name(&self) -> String {
        if self.state == VmState::Active {
            self.lcm.name().to_string()
        } else {
            self.state.name().to_string()
        }
    }

    pub fn to_xml(&self) -> String {
        let mut out = String::from("<VM>");
        out.push_str(&format!("<ID>{}</ID>", self.id));
        out.push_str(&self.owner.to_xml());
        out.push_str(&format!("<NAME>{}</NAME>", xml::escape(&self.name)));
        out.push_str(PERMISSIONS);
        out.push_str(&format!(
            "<LAST_POLL>0</LAST_POLL><STATE>{}</STATE><LCM_STATE>{}</LCM_STATE>\
             <PREV_STATE>{}</PREV_STATE><PREV_LCM_STATE>{}</PREV_LCM_STATE>\
             <RESCHED>0</RESCHED><STIME>{}</STIME><ETIME>{}</ETIME>",
            self.state as i32,
            self.lcm as i32,
            self.prev_state as i32,
            self.prev_lcm as i32,
            self.stime,
            self.etime
        ));
        let deployed = self.state == VmState::Active || self.state == VmState::Done;
        if deployed && self.lcm != Lcm::Prolog {
            out.push_str(&format!("<DEPLOY_ID>one-{}</DEPLOY_ID>", self.id));
        } else {
            out.push_str("<DEPLOY_ID></DEPLOY_ID>");
        }
        out.push_str("<MONITORING></MONITORING>");
        out.push_str(&self.template.to_xml("TEMPLATE"));
        out.push_str(&self.user_template.to_xml("USER_TEMPLATE"));
        out.push_str("<HISTORY_RECORDS></HISTORY_RECORDS></VM>");
        out
    }
}

impl VmTemplate {
    pub fn to_xml(&self, owner: &Owner) -> String {
        let mut out = format!("<VMTEMPLATE><ID>{}</ID>", self.id);
        out.push_str(&owner.to_xml());
        out.push_str(&format!("<NAME>{}</NAME>", xml::escape(&self.name)));
        out.push_str(PERMISSIONS);
        out.push_str(&format!("<REGTIME>{}</REGTIME>", self.regtime));
        out.push_str(&self.template.to_xml("TEMPLATE"));
        out.push_str("</VMTEMPLATE>");
        out
    }
}

const PERMISSIONS: &str = "<PERMISSIONS><OWNER_U>1</OWNER_U><OWNER_M>1</OWNER_M>\
<OWNER_A>0</OWNER_A><GROUP_U>0</GROUP_U><GROUP_M>0</GROUP_M><GROUP_A>0</GROUP_A>\
<OTHER_U>0</OTHER_U><OTHER_M>0</OTHER_M><OTHER_A>0</OTHER_A></PERMISSIONS>";

/// Which VMs a pool call's `filter`, `start`, `end` select, by id (`include/PoolSQL.h`).
pub(crate) fn in_range(ids: impl Iterator<Item = i64>, start: i64, end: i64) -> Vec<i64> {
    let ids: Vec<i64> = ids.collect();
    if start == -1 && end == -1 {
        return ids;
    }
    if end < -1 {
        // Pagination: `start` is the offset, `-end` the page size.
        let offset = start.max(0) as usize;
        let size = (-end) as usize;
        return ids.into_iter().skip(offset).take(size).collect();
    }
    ids.into_iter()
        .filter(|id| (start < 0 || *id >= start) && (end < 0 || *id <= end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_pages() {
        let ids = || [0, 1, 2, 5, 9].into_iter();
        assert_eq!(in_range(ids(), -1, -1), vec![0, 1, 2, 5, 9]);
        assert_eq!(in_range(ids(), 2, 5), vec![2, 5]);
        assert_eq!(in_range(ids(), 1, -2), vec![1, 2]);
    }

    #[test]
    fn failure_knob_names() {
        assert_eq!(Lcm::failure_named("boot_failure"), Some(Lcm::BootFailure));
        assert_eq!(Lcm::failure_named("nope"), None);
        assert_eq!(Lcm::BootFailure as i32, 36);
    }

    #[test]
    fn the_sim_states_carry_oned_names() {
        let names: Vec<&str> = [
            Lcm::Init,
            Lcm::Prolog,
            Lcm::Boot,
            Lcm::Running,
            Lcm::Epilog,
            Lcm::Shutdown,
            Lcm::BootFailure,
            Lcm::PrologFailure,
        ]
        .map(Lcm::name)
        .into();
        assert_eq!(
            names,
            [
                "LCM_INIT",
                "PROLOG",
                "BOOT",
                "RUNNING",
                "EPILOG",
                "SHUTDOWN",
                "BOOT_FAILURE",
                "PROLOG_FAILURE"
            ]
        );
        let states: Vec<&str> = [
            VmState::Pending,
            VmState::Hold,
            VmState::Active,
            VmState::Done,
        ]
        .map(VmState::name)
        .into();
        assert_eq!(states, ["PENDING", "HOLD", "ACTIVE", "DONE"]);
    }
}
