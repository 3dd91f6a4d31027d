//! What a provision run reports on its channel: one [`ProvisionEvent`] per
//! change of a VM (state, LCM state, IP, stage), run-level problems, and the
//! summary at the end. The app and the headless command fold these.
use serde::{Deserialize, Serialize};

/// How far one VM has got on its way to a joined node (in that order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProvisionStage {
    /// Asked for; PENDING, HOLD or PROLOG.
    Creating,
    /// BOOT.
    Booting,
    /// RUNNING (with or without an IP yet).
    Running,
    /// Talos apid answers on the VM's IP.
    Apid,
    /// Talos sees it as a cluster member and its Kubernetes node is Ready.
    Joined,
    /// Stopped: a failure state, a refused call, or out of time.
    Failed,
    /// Terminated by the operator.
    Terminated,
}

impl ProvisionStage {
    pub fn as_str(self) -> &'static str {
        match self {
            ProvisionStage::Creating => "creating",
            ProvisionStage::Booting => "booting",
            ProvisionStage::Running => "running",
            ProvisionStage::Apid => "apid",
            ProvisionStage::Joined => "joined",
            ProvisionStage::Failed => "failed",
            ProvisionStage::Terminated => "terminated",
        }
    }

    /// Nothing more will happen to the VM by itself.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ProvisionStage::Joined | ProvisionStage::Failed | ProvisionStage::Terminated
        )
    }
}

/// One VM's progress, as of one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmProgress {
    /// The provider's VM id (absent until OpenNebula assigned one).
    pub id: Option<u64>,
    pub name: String,
    /// STATE by name (`PENDING`, `ACTIVE`…).
    pub state: String,
    /// LCM_STATE by name (`PROLOG`, `BOOT`, `RUNNING`, `BOOT_FAILURE`…).
    pub lcm_state: String,
    pub ip: Option<String>,
    pub stage: ProvisionStage,
    /// Why it failed, or what it is waiting for.
    pub reason: Option<String>,
}

impl VmProgress {
    /// One line for the headless progress output.
    pub fn line(&self) -> String {
        let id = self.id.map_or_else(|| "-".to_string(), |i| i.to_string());
        let mut line = format!(
            "vm {id} {}: {} ({}/{})",
            self.name,
            self.stage.as_str(),
            self.state,
            self.lcm_state
        );
        if let Some(ip) = &self.ip {
            line.push_str(&format!(" ip {ip}"));
        }
        if let Some(reason) = &self.reason {
            line.push_str(&format!(": {reason}"));
        }
        line
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvisionSummary {
    pub cluster: String,
    pub requested: usize,
    pub vms: Vec<VmProgress>,
    /// A run-level failure (nothing or not everything was created).
    pub error: Option<String>,
}

impl ProvisionSummary {
    pub fn joined(&self) -> usize {
        self.vms
            .iter()
            .filter(|v| v.stage == ProvisionStage::Joined)
            .count()
    }

    /// Every node asked for has joined.
    pub fn succeeded(&self) -> bool {
        self.error.is_none() && self.joined() == self.requested
    }

    /// Its line, as how the run ended: `Ok` when every node asked for joined.
    pub fn result(&self) -> Result<String, String> {
        let line = self.line();
        self.succeeded().then_some(line.clone()).ok_or(line)
    }

    pub fn line(&self) -> String {
        let failed: Vec<String> = self
            .vms
            .iter()
            .filter(|v| v.stage != ProvisionStage::Joined)
            .map(|v| format!("{} ({})", v.name, v.stage.as_str()))
            .collect();
        let mut line = format!(
            "{}: {} of {} new node(s) joined",
            self.cluster,
            self.joined(),
            self.requested
        );
        if !failed.is_empty() {
            line.push_str(&format!("; not joined: {}", failed.join(", ")));
        }
        if let Some(e) = &self.error {
            line.push_str(&format!("; {e}"));
        }
        line
    }
}

/// What the runner sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvisionEvent {
    /// A VM changed (state, LCM state, IP, stage or reason).
    Vm(VmProgress),
    /// Something about the run as a whole (a refused call, a scale request).
    Note(String),
    /// The run is over.
    Finished(ProvisionSummary),
}
