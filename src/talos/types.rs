//! Typed results of Talos API calls, in the operator's words, converted from
//! the generated protobuf messages. Pure conversions, no IO.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::proto::machine as pb;

/// What `Version` says about a node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeVersion {
    /// The Talos release, e.g. `v1.11.3`.
    pub tag: String,
    pub sha: String,
    pub arch: String,
    /// Platform name (`metal`, `aws`, ...), when the node said.
    pub platform: Option<String>,
    /// Whether RBAC is enforced on the node.
    pub rbac: bool,
}

impl From<pb::Version> for NodeVersion {
    fn from(v: pb::Version) -> Self {
        let info = v.version.unwrap_or_default();
        NodeVersion {
            tag: info.tag,
            sha: info.sha,
            arch: info.arch,
            platform: v.platform.map(|p| p.name).filter(|n| !n.is_empty()),
            rbac: v.features.map(|f| f.rbac).unwrap_or(false),
        }
    }
}

/// One member of the etcd cluster, as the member list reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdMember {
    pub id: u64,
    pub hostname: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
    pub is_learner: bool,
}

impl From<pb::EtcdMember> for EtcdMember {
    fn from(m: pb::EtcdMember) -> Self {
        EtcdMember {
            id: m.id,
            hostname: m.hostname,
            peer_urls: m.peer_urls,
            client_urls: m.client_urls,
            is_learner: m.is_learner,
        }
    }
}

/// How one etcd member sees itself (asked on its own node).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtcdMemberStatus {
    pub member_id: u64,
    /// The member id of the leader this member follows (0: none).
    pub leader: u64,
    pub db_size: i64,
    pub db_size_in_use: i64,
    pub raft_term: u64,
    pub raft_index: u64,
    pub raft_applied_index: u64,
    pub errors: Vec<String>,
    pub is_learner: bool,
    pub protocol_version: String,
    pub storage_version: String,
}

impl From<pb::EtcdMemberStatus> for EtcdMemberStatus {
    fn from(s: pb::EtcdMemberStatus) -> Self {
        EtcdMemberStatus {
            member_id: s.member_id,
            leader: s.leader,
            db_size: s.db_size,
            db_size_in_use: s.db_size_in_use,
            raft_term: s.raft_term,
            raft_index: s.raft_index,
            raft_applied_index: s.raft_applied_index,
            errors: s.errors,
            is_learner: s.is_learner,
            protocol_version: s.protocol_version,
            storage_version: s.storage_version,
        }
    }
}

/// The kind of an etcd alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EtcdAlarmKind {
    /// The member ran out of its storage quota; etcd refuses writes.
    Nospace,
    /// The member found its data inconsistent.
    Corrupt,
    Unknown,
}

impl EtcdAlarmKind {
    fn from_proto(value: i32) -> Option<Self> {
        match pb::etcd_member_alarm::AlarmType::try_from(value) {
            Ok(pb::etcd_member_alarm::AlarmType::None) => None,
            Ok(pb::etcd_member_alarm::AlarmType::Nospace) => Some(EtcdAlarmKind::Nospace),
            Ok(pb::etcd_member_alarm::AlarmType::Corrupt) => Some(EtcdAlarmKind::Corrupt),
            Err(_) => Some(EtcdAlarmKind::Unknown),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            EtcdAlarmKind::Nospace => "NOSPACE",
            EtcdAlarmKind::Corrupt => "CORRUPT",
            EtcdAlarmKind::Unknown => "UNKNOWN",
        }
    }
}

/// An active etcd alarm on one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdAlarm {
    pub member_id: u64,
    pub kind: EtcdAlarmKind,
}

impl EtcdAlarm {
    /// `NONE` entries are dropped: they are not alarms.
    pub(crate) fn from_proto(a: &pb::EtcdMemberAlarm) -> Option<Self> {
        EtcdAlarmKind::from_proto(a.alarm).map(|kind| EtcdAlarm {
            member_id: a.member_id,
            kind,
        })
    }
}

/// etcd member ids as talosctl prints them: 16 lower-case hex digits.
pub fn member_id_hex(id: u64) -> String {
    format!("{id:016x}")
}

/// One system service (`apid`, `etcd`, `kubelet`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceStatus {
    pub id: String,
    /// `Running`, `Waiting`, `Finished`, ... as the node says.
    pub state: String,
    /// `None` while the health is unknown (not checked yet, or no health check).
    pub healthy: Option<bool>,
    pub last_message: String,
}

impl From<pb::ServiceInfo> for ServiceStatus {
    fn from(s: pb::ServiceInfo) -> Self {
        let health = s.health.unwrap_or_default();
        ServiceStatus {
            id: s.id,
            state: s.state,
            healthy: (!health.unknown).then_some(health.healthy),
            last_message: health.last_message,
        }
    }
}

/// The machine's lifecycle stage (MachineStatus resource / MachineStatusEvent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MachineStage {
    #[default]
    Unknown,
    Booting,
    Installing,
    Maintenance,
    Running,
    Rebooting,
    ShuttingDown,
    Resetting,
    Upgrading,
}

impl MachineStage {
    /// Same numbers as the proto enum and the resource's enum.
    pub fn from_number(n: i32) -> Self {
        match n {
            1 => MachineStage::Booting,
            2 => MachineStage::Installing,
            3 => MachineStage::Maintenance,
            4 => MachineStage::Running,
            5 => MachineStage::Rebooting,
            6 => MachineStage::ShuttingDown,
            7 => MachineStage::Resetting,
            8 => MachineStage::Upgrading,
            _ => MachineStage::Unknown,
        }
    }

    /// The text form Talos uses in YAML and `talosctl get`: lower case with spaces.
    pub fn as_str(&self) -> &'static str {
        match self {
            MachineStage::Unknown => "unknown",
            MachineStage::Booting => "booting",
            MachineStage::Installing => "installing",
            MachineStage::Maintenance => "maintenance",
            MachineStage::Running => "running",
            MachineStage::Rebooting => "rebooting",
            MachineStage::ShuttingDown => "shutting down",
            MachineStage::Resetting => "resetting",
            MachineStage::Upgrading => "upgrading",
        }
    }
}

impl FromStr for MachineStage {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let stage = match s.trim().to_ascii_lowercase().replace('_', " ").as_str() {
            "unknown" => MachineStage::Unknown,
            "booting" => MachineStage::Booting,
            "installing" => MachineStage::Installing,
            "maintenance" => MachineStage::Maintenance,
            "running" => MachineStage::Running,
            "rebooting" => MachineStage::Rebooting,
            "shutting down" => MachineStage::ShuttingDown,
            "resetting" => MachineStage::Resetting,
            "upgrading" => MachineStage::Upgrading,
            other => return Err(format!("unknown machine stage {other:?}")),
        };
        Ok(stage)
    }
}

impl fmt::Display for MachineStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for MachineStage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for MachineStage {
    /// Accepts the text form and, leniently, the enum number.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(i32),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
            Raw::Number(n) => Ok(MachineStage::from_number(n)),
        }
    }
}

/// A readiness condition the machine does not meet yet (`time`, `network`, `services`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UnmetCondition {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub reason: String,
}

/// Stage and readiness of a machine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MachineStatus {
    pub stage: MachineStage,
    pub ready: bool,
    pub unmet_conditions: Vec<UnmetCondition>,
}

impl From<pb::MachineStatusEvent> for MachineStatus {
    fn from(e: pb::MachineStatusEvent) -> Self {
        let status = e.status.unwrap_or_default();
        MachineStatus {
            stage: MachineStage::from_number(e.stage),
            ready: status.ready,
            unmet_conditions: status
                .unmet_conditions
                .into_iter()
                .map(|c| UnmetCondition {
                    name: c.name,
                    reason: c.reason,
                })
                .collect(),
        }
    }
}

/// The acknowledgement of an action that runs on in the background (upgrade, reboot).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ActionAck {
    /// What the node said (`Upgrade request received`), if anything.
    pub ack: String,
    /// Events caused by the action carry this id.
    pub actor_id: String,
}

/// How a reboot is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RebootMode {
    #[default]
    Default,
    Powercycle,
    Force,
}

impl RebootMode {
    pub(crate) fn to_proto(self) -> i32 {
        match self {
            RebootMode::Default => pb::reboot_request::Mode::Default as i32,
            RebootMode::Powercycle => pb::reboot_request::Mode::Powercycle as i32,
            RebootMode::Force => pb::reboot_request::Mode::Force as i32,
        }
    }
}

/// Options of the legacy `MachineService.Upgrade`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyUpgrade {
    /// How long the call may take: the node pulls the installer before it answers.
    pub bound: std::time::Duration,
    /// Installer image reference.
    pub image: String,
    /// Stage the upgrade for the next boot.
    pub stage: bool,
    /// Skip the node's own etcd health checks. Can lose data.
    pub force: bool,
    pub preserve: bool,
    /// Power-cycle instead of kexec.
    pub powercycle: bool,
}

impl Default for LegacyUpgrade {
    /// A bound as long as a slow registry pull: talosctl sets none at all.
    fn default() -> Self {
        LegacyUpgrade {
            bound: std::time::Duration::from_secs(10 * 60),
            image: String::new(),
            stage: false,
            force: false,
            preserve: false,
            powercycle: false,
        }
    }
}

/// How a configuration is asked to be applied. REBOOT is not among them: it is deprecated
/// (api/machine/machine.proto at v1.14.0-rc.1, "use AUTO or NO_REBOOT instead") and a Talos
/// 1.14 node refuses it outside maintenance (v1alpha1_server.go), while AUTO and NO_REBOOT
/// exist on every version taloscope speaks to; a reboot is its own call.
/// `config patch --mode` takes one; each variant's doc comment is its help there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ApplyMode {
    /// The node applies it now, rebooting when the change needs it.
    #[default]
    Auto,
    /// Now, without a reboot; a node refuses a change that needs one.
    NoReboot,
    /// At the node's next reboot.
    Staged,
    /// Now, on trial: the node reverts it by itself unless it is confirmed within
    /// --try-timeout; taloscope confirms it once the node is back and healthy.
    Try,
}

impl ApplyMode {
    pub(crate) fn to_proto(self) -> i32 {
        use pb::apply_configuration_request::Mode;
        match self {
            ApplyMode::Auto => Mode::Auto as i32,
            ApplyMode::NoReboot => Mode::NoReboot as i32,
            ApplyMode::Staged => Mode::Staged as i32,
            ApplyMode::Try => Mode::Try as i32,
        }
    }
}

/// The mode a node says it applied a configuration with: a node before 1.14 answers AUTO with
/// the mode it chose, REBOOT included; a 1.14 node answers AUTO as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppliedMode {
    #[default]
    Auto,
    NoReboot,
    Reboot,
    Staged,
    Try,
}

impl AppliedMode {
    pub(crate) fn from_proto(n: i32) -> Self {
        use pb::apply_configuration_request::Mode;
        match Mode::try_from(n) {
            Ok(Mode::NoReboot) => AppliedMode::NoReboot,
            Ok(Mode::Reboot) => AppliedMode::Reboot,
            Ok(Mode::Staged) => AppliedMode::Staged,
            Ok(Mode::Try) => AppliedMode::Try,
            _ => AppliedMode::Auto,
        }
    }
}

/// What the node did with an applied configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppliedConfiguration {
    /// The mode the node actually chose.
    pub mode: AppliedMode,
    pub mode_details: String,
    pub warnings: Vec<String>,
}

/// Progress of `ImageService.Pull`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImagePullProgress {
    Layer {
        layer_id: String,
        /// `downloading`, `extracting`, ... (lower-case proto names).
        status: String,
        offset: i64,
        total: i64,
    },
    /// The pull finished; this reference is what `lifecycle_upgrade` takes.
    Pulled { image_name: String },
}

/// Progress of `LifecycleService.Upgrade` (writing the new boot assets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpgradeProgress {
    Message(String),
    /// The installer finished; non-zero is a failure.
    Exited(i32),
}

/// Which containerd holds an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageNamespace {
    /// Talos' own containerd (installer images).
    #[default]
    System,
    /// The CRI containerd (Kubernetes images).
    Cri,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_text_round_trips() {
        for n in 0..=8 {
            let stage = MachineStage::from_number(n);
            assert_eq!(stage.as_str().parse::<MachineStage>(), Ok(stage));
        }
        assert_eq!(
            "shutting down".parse::<MachineStage>(),
            Ok(MachineStage::ShuttingDown)
        );
        assert!("sideways".parse::<MachineStage>().is_err());
        assert_eq!(MachineStage::from_number(42), MachineStage::Unknown);
    }

    #[test]
    fn member_ids_print_like_talosctl() {
        assert_eq!(member_id_hex(0xabc), "0000000000000abc");
        assert_eq!(member_id_hex(u64::MAX), "ffffffffffffffff");
    }

    #[test]
    fn none_alarms_are_not_alarms() {
        let none = pb::EtcdMemberAlarm {
            member_id: 1,
            alarm: 0,
        };
        assert_eq!(EtcdAlarm::from_proto(&none), None);
        let nospace = pb::EtcdMemberAlarm {
            member_id: 7,
            alarm: 1,
        };
        assert_eq!(
            EtcdAlarm::from_proto(&nospace),
            Some(EtcdAlarm {
                member_id: 7,
                kind: EtcdAlarmKind::Nospace
            })
        );
    }

    #[test]
    fn service_health_unknown_is_none() {
        let svc = pb::ServiceInfo {
            id: "etcd".into(),
            state: "Running".into(),
            events: None,
            health: Some(pb::ServiceHealth {
                unknown: true,
                healthy: false,
                last_message: String::new(),
                last_change: None,
            }),
        };
        assert_eq!(ServiceStatus::from(svc).healthy, None);
    }
}
