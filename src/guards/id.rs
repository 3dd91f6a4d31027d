//! The guards upgrades, provisions and node actions check, by name: a short title for the guard column and
//! the `?` explanation of what each checks and why it matters, for engineers new to Talos.
use serde::Serialize;

/// One guard of an upgrade or provision plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardId {
    NoOtherRollout,
    ClientRole,
    /// Talos upgrade: the target is a release the registry or the built-in table lists.
    ListedRelease,
    VersionPath,
    KubernetesSupported,
    InstallerImage,
    NodesReachable,
    NodesRunning,
    NodesReady,
    EtcdHealthy,
    EtcdAlarms,
    EtcdQuorum,
    SingleControlPlane,
    /// Kubernetes upgrade: same minor or the next one only.
    KubernetesPath,
    /// Kubernetes upgrade: every node's Talos runs the target.
    TalosSupportsTarget,
    /// Kubernetes upgrade: every control-plane static pod ready.
    ComponentsReady,
    /// Kubernetes upgrade: no objects stored in API versions the target removes.
    RemovedApis,
    /// Kubernetes upgrade: no component uses a flag, feature gate or admission plugin the
    /// target removes.
    RemovedFlags,
    /// Provision: etcd can lose a member now, so a control plane may join.
    JoinQuorum,
    /// Provision: the etcd member count after the join is odd.
    OddMembers,
    /// Provision: one new control plane at a time.
    OneControlPlane,
    /// Provision: the template (or service) is this cluster's, for this role.
    ProvisionSource,
    /// Provision: the machine config's cluster endpoint is this cluster's.
    MachineConfigEndpoint,
    /// Provision: the provider answers and has room for the new VMs.
    ProviderRoom,
    /// Node action: the client certificate may reboot, shut down and restart services
    /// (os:operator or os:admin).
    NodeActionRole,
    /// Node action: every pod to evict may go now, as its disruption budgets allow.
    WorkloadsDrainable,
    /// Service restart: the node runs the service and Talos restarts it through its API.
    ServiceRestartable,
    /// etcd maintenance: the client certificate's role may make the call.
    EtcdRole,
    /// etcd defragment: one member at a time, the leader last.
    DefragOrder,
    /// etcd disarm: after defragmenting, every member's database fits its quota.
    EtcdSpace,
    /// etcd remove-member: no running node is that member.
    MemberWithoutNode,
    /// etcd forfeit: the node's member is the leader.
    EtcdLeader,
    /// etcd snapshot: the file can be written where asked.
    SnapshotFile,
    /// Create: an odd number of control planes.
    ControlPlaneCount,
    /// Create: the provider answers, has the templates (or service template) and room.
    ProviderReady,
    /// Create: no talosconfig or kubeconfig context has the new cluster's name.
    NameFree,
    /// Create: the operator's talosconfig and kubeconfig can take the new contexts.
    ContextFiles,
    /// Create: the Talos release runs the Kubernetes release.
    VersionPair,
    /// Create: how the machine configs reach the VMs (USER_DATA is readable with the VM).
    ConfigDelivery,
    /// Headless create: each VM's maintenance fingerprint is given, or pinning the first seen
    /// acknowledged.
    MaintenanceFingerprints,
    /// Delete: taloscope created the cluster (its journal), or the operator named its VMs.
    KnownVms,
    /// Delete: the cluster and everything in it go for good.
    DestroysData,
    /// In-place upgrade: the cluster is not one a Cluster API management cluster owns.
    CapiOwned,
    /// CAPI doctor: the Machine to delete is the one the control-plane rollout is stuck on,
    /// and the control plane keeps another Machine.
    StuckMachine,
    /// CAPI scale: the TalosControlPlane or MachineDeployment is not mid-rollout or mid-scale.
    ScaleSettled,
    /// CAPI scale: the new replica count is within bounds and changes something.
    ScaleBounds,
    /// CAPI scale: etcd keeps a majority through the change.
    ScaleQuorum,
    /// CAPI scale: the control-plane count after the scale is odd.
    ScaleOddControlPlanes,
    /// CAPI-way upgrade: no rollout of the providers already under way.
    CapiRolloutSettled,
    /// CAPI-way Talos upgrade: the provider has the VM template of the target version.
    CapiVmTemplate,
    /// CAPI doctor: the node to reboot is the stopped single etcd member's, answering, running.
    EtcdStopped,
    /// Node action: what the action waits for at its end can still happen (no etcd alarm
    /// keeps the node's member unhealthy for ever).
    WaitCanFinish,
    /// Forget: the node is still not a member (it does not answer, and etcd and Kubernetes
    /// answered without it).
    NotAMember,
    /// Forget: the talosconfig context keeps another node and endpoint.
    OtherNodesLeft,
    /// Config patch: the node's dry run accepts the patched configuration in the mode asked.
    ConfigAccepted,
}

impl GuardId {
    /// Every guard, in the order the plan screen shows them.
    pub const ALL: [GuardId; 13] = [
        GuardId::NoOtherRollout,
        GuardId::ClientRole,
        GuardId::ListedRelease,
        GuardId::VersionPath,
        GuardId::KubernetesSupported,
        GuardId::InstallerImage,
        GuardId::NodesReachable,
        GuardId::NodesRunning,
        GuardId::NodesReady,
        GuardId::EtcdHealthy,
        GuardId::EtcdAlarms,
        GuardId::EtcdQuorum,
        GuardId::SingleControlPlane,
    ];

    /// The Kubernetes upgrade's guards, in the order its plan shows them.
    pub const KUBERNETES: [GuardId; 11] = [
        GuardId::NoOtherRollout,
        GuardId::ClientRole,
        GuardId::KubernetesPath,
        GuardId::TalosSupportsTarget,
        GuardId::NodesReady,
        GuardId::EtcdHealthy,
        GuardId::EtcdAlarms,
        GuardId::ComponentsReady,
        GuardId::RemovedApis,
        GuardId::RemovedFlags,
        GuardId::SingleControlPlane,
    ];

    /// A provision's guards, in the order its plan shows them.
    pub const PROVISION: [GuardId; 7] = [
        GuardId::CapiOwned,
        GuardId::JoinQuorum,
        GuardId::OddMembers,
        GuardId::OneControlPlane,
        GuardId::ProvisionSource,
        GuardId::MachineConfigEndpoint,
        GuardId::ProviderRoom,
    ];

    /// The etcd maintenance guards, in the order their plans show them.
    pub const ETCD: [GuardId; 9] = [
        GuardId::EtcdRole,
        GuardId::NoOtherRollout,
        GuardId::EtcdHealthy,
        GuardId::DefragOrder,
        GuardId::EtcdSpace,
        GuardId::MemberWithoutNode,
        GuardId::EtcdQuorum,
        GuardId::EtcdLeader,
        GuardId::SnapshotFile,
    ];

    /// A new cluster's guards, in the order its plan shows them.
    pub const CREATE: [GuardId; 6] = [
        GuardId::NameFree,
        GuardId::ContextFiles,
        GuardId::VersionPair,
        GuardId::ControlPlaneCount,
        GuardId::ProviderReady,
        GuardId::ConfigDelivery,
    ];

    /// A cluster deletion's guards, in the order its plan shows them.
    pub const DELETE: [GuardId; 3] = [
        GuardId::NoOtherRollout,
        GuardId::KnownVms,
        GuardId::DestroysData,
    ];

    /// A Cluster API scale's guards, in the order its plan shows them.
    pub const SCALE: [GuardId; 6] = [
        GuardId::NoOtherRollout,
        GuardId::ScaleSettled,
        GuardId::ScaleBounds,
        GuardId::EtcdHealthy,
        GuardId::ScaleQuorum,
        GuardId::ScaleOddControlPlanes,
    ];

    /// Short name for the guard column.
    pub fn title(self) -> &'static str {
        match self {
            GuardId::NoOtherRollout => "no other rollout",
            GuardId::ClientRole => "client role",
            GuardId::ListedRelease => "listed release",
            GuardId::VersionPath => "version path",
            GuardId::KubernetesSupported => "Kubernetes supported",
            GuardId::InstallerImage => "installer image",
            GuardId::NodesReachable => "nodes reachable",
            GuardId::NodesRunning => "nodes running",
            GuardId::NodesReady => "nodes ready",
            GuardId::EtcdHealthy => "etcd healthy",
            GuardId::EtcdAlarms => "etcd alarms",
            GuardId::EtcdQuorum => "etcd quorum",
            GuardId::SingleControlPlane => "single control plane",
            GuardId::KubernetesPath => "Kubernetes version path",
            GuardId::TalosSupportsTarget => "Talos supports target",
            GuardId::ComponentsReady => "control plane ready",
            GuardId::RemovedApis => "removed APIs",
            GuardId::RemovedFlags => "removed flags",
            GuardId::JoinQuorum => "etcd quorum for a join",
            GuardId::OddMembers => "odd etcd members",
            GuardId::OneControlPlane => "one control plane at a time",
            GuardId::ProvisionSource => "template",
            GuardId::MachineConfigEndpoint => "machine config endpoint",
            GuardId::ProviderRoom => "provider room",
            GuardId::NodeActionRole => "client role",
            GuardId::WorkloadsDrainable => "workloads drainable",
            GuardId::ServiceRestartable => "service restartable",
            GuardId::EtcdRole => "client role",
            GuardId::DefragOrder => "one member at a time",
            GuardId::EtcdSpace => "room after defragment",
            GuardId::MemberWithoutNode => "member has no node",
            GuardId::EtcdLeader => "node is the leader",
            GuardId::SnapshotFile => "snapshot file",
            GuardId::ControlPlaneCount => "odd control planes",
            GuardId::ProviderReady => "provider ready",
            GuardId::NameFree => "name free",
            GuardId::ContextFiles => "context files writable",
            GuardId::VersionPair => "Talos runs Kubernetes",
            GuardId::ConfigDelivery => "config delivery",
            GuardId::MaintenanceFingerprints => "maintenance fingerprints",
            GuardId::KnownVms => "known VMs",
            GuardId::DestroysData => "destroys data",
            GuardId::CapiOwned => "not owned by Cluster API",
            GuardId::StuckMachine => "machine is the stuck one",
            GuardId::ScaleSettled => "no CAPI rollout",
            GuardId::ScaleBounds => "replicas in bounds",
            GuardId::ScaleQuorum => "etcd quorum after scaling",
            GuardId::ScaleOddControlPlanes => "odd control planes",
            GuardId::CapiRolloutSettled => "no CAPI rollout under way",
            GuardId::CapiVmTemplate => "VM template for the target",
            GuardId::EtcdStopped => "only etcd member stopped",
            GuardId::WaitCanFinish => "its wait can finish",
            GuardId::NotAMember => "not a member",
            GuardId::OtherNodesLeft => "other nodes left",
            GuardId::ConfigAccepted => "config accepted",
        }
    }

    /// What the guard checks and why it matters (the `?` text).
    pub fn explain(self) -> &'static str {
        match self {
            GuardId::NoOtherRollout => {
                "Checks that no other console is rolling out an upgrade on this cluster. Two rollouts at once could each take a different control plane down at the same time and lose etcd quorum, so only one may run per cluster, whoever started it and from whichever host. The rollout Lease that says so lives in the cluster's own Kubernetes API: when that API is down because of the very fault being repaired (the doctor's reboot of a node whose etcd, the only member, stopped: kube-apiserver reaches only that etcd, so every read of the Lease times out), the Lease cannot be read. The guard then warns and asks you to type that no one else is changing the cluster; check with your team first. Nobody can take or renew the Lease while the API is down, but a rollout started before may still be at work through the Talos API."
            }
            GuardId::ClientRole => {
                "Checks that your client certificate carries the os:admin role. Talos only accepts upgrade calls (and etcd leadership hand-over) from admins; an os:operator or os:reader certificate would be refused halfway, so the rollout does not start."
            }
            GuardId::ListedRelease => {
                "Checks that the target Talos version is a published release: one the installer image's registry lists (ghcr.io/siderolabs/installer, or the mirrors the cluster's machine config names), or the table built into taloscope when no registry answers. A version neither knows may have no installer image at all, and a node told to install it would fail the pull; type the acknowledgement only when you know the image exists (a release newer than taloscope, a private build)."
            }
            GuardId::VersionPath => {
                "Checks that every node can go from its Talos version to the target: one minor at a time (1.11 -> 1.12 -> 1.13), no downgrade unless asked, and only to a version whose installer accepts the running one. Skipping a minor skips the migrations that minor runs on boot."
            }
            GuardId::KubernetesSupported => {
                "Checks that the target Talos runs the Kubernetes version the cluster runs now. Each Talos release supports a window of Kubernetes minors; outside it the kubelet or control plane may not start after the reboot. Upgrade Kubernetes first if it is too old for the target."
            }
            GuardId::InstallerImage => {
                "Checks that the installer image's tag names the target version. The installer image is what actually gets installed; a custom or factory image with another tag would leave the node on a different version than the plan says."
            }
            GuardId::NodesReachable => {
                "Checks that Talos answers on every node in the plan. A node that does not answer cannot be upgraded, and its state (and its etcd member) cannot be trusted while other nodes reboot."
            }
            GuardId::NodesRunning => {
                "Checks that every node is in the running stage, not booting, rebooting, upgrading or in maintenance. A node in any other stage is already busy; upgrading around it takes away capacity the cluster may be counting on."
            }
            GuardId::NodesReady => {
                "Checks that every node reports ready (all its Talos conditions met) and that its Kubernetes node is Ready. Rebooting one node while another is not ready leaves the cluster short of two nodes at once."
            }
            GuardId::EtcdHealthy => {
                "Checks that every etcd member answers with no errors, that none is a learner still joining, that there is a leader, and that no member known to the plan has left. etcd holds all Kubernetes state; each control-plane reboot takes one member away, so all must be healthy first."
            }
            GuardId::EtcdAlarms => {
                "Checks that etcd has no alarms (NOSPACE, CORRUPT). With an alarm etcd refuses writes or its data is suspect; rebooting members then risks a cluster that does not come back."
            }
            GuardId::EtcdQuorum => {
                "Checks, for each control plane, that etcd still has a majority of healthy voting members while that node is down. Lose the majority and etcd stops accepting writes: the Kubernetes API fails until the member returns. Since Talos 1.13 the server no longer checks this itself."
            }
            GuardId::KubernetesPath => {
                "Checks that the target is a later patch of the running Kubernetes minor or a release of the next minor. Kubernetes supports skew of one minor between the API server and the other components while they upgrade; skipping a minor leaves components two minors apart and skips the storage migrations of the minor in between."
            }
            GuardId::TalosSupportsTarget => {
                "Checks that the Talos version on every node runs the target Kubernetes. Talos renders the static pods and runs the kubelet itself; a Kubernetes release newer than its supported window may not start. Upgrade Talos first when it is too old for the target."
            }
            GuardId::ComponentsReady => {
                "Checks that kube-apiserver, kube-controller-manager and kube-scheduler are ready on every control plane. Each step restarts one of them on one node; doing so while another is already down leaves the control plane with less than it needs."
            }
            GuardId::RemovedApis => {
                "Counts objects still stored in API versions the target no longer serves. After the upgrade they cannot be read or updated through those versions, and tools and manifests that use them fail. Migrate them first, or acknowledge that you accept it."
            }
            GuardId::RemovedFlags => {
                "Checks the flags Talos runs kube-apiserver, kube-controller-manager, kube-scheduler and every kubelet with (their extraArgs in the machine config) against the flags, feature gates and admission plugins the target minor removes, as talosctl upgrade-k8s does. A component started with a removed one exits at once and never comes back on the new version. Remove it from the machine config first."
            }
            GuardId::JoinQuorum => {
                "Checks that etcd can lose a member now before a control plane joins. A new control plane joins etcd as a member; until it has caught up, a join that goes wrong counts as a member lost. With no member to spare (one already down, say) that loss stops etcd writes and the Kubernetes API, so repair the cluster first."
            }
            GuardId::OddMembers => {
                "Warns when the join leaves an even number of etcd members. Four members need three for a majority and tolerate one failure, like three; the fourth adds load and one more thing to fail without adding tolerance. Add control planes two at a time (one, then the next) to reach an odd count, or acknowledge it."
            }
            GuardId::OneControlPlane => {
                "Refuses to add more than one control plane in one go unless acknowledged. Each joining member changes the majority etcd needs; two joining at once can leave etcd waiting on two members that are not ready, which is how clusters lose quorum while growing."
            }
            GuardId::ProvisionSource => {
                "Checks that the VM template (or OneFlow service) is the one taloscope's config names for this cluster and role, at this cluster's provider. Another role's template boots a machine of the wrong kind; another cluster's template boots it into the wrong cluster."
            }
            GuardId::MachineConfigEndpoint => {
                "Checks that the machine config's cluster endpoint (cluster.controlPlane.endpoint) is an address of this cluster. The new node joins whatever that endpoint points at: a config made for another cluster adds the node there."
            }
            GuardId::ProviderRoom => {
                "Checks that the provider answered and has room: a OneFlow role may not grow past its max_vms, and the new VMs (a template's, or a OneFlow role's, which OneFlow makes as you) must fit the VM quota of your OpenNebula user and of its group (VMS, CPU, MEMORY and their RUNNING_ counterparts; a limit of -1 is the default quota, -2 unlimited; oneadmin has none), shown as the quota, what is used and what the new VMs need. Asking for more than OneFlow allows leaves the service in a failed scaling state that has to be repaired by hand; past a quota OpenNebula refuses the VMs one by one. A quota your user may not read is a warning."
            }
            GuardId::NodeActionRole => {
                "Checks that your client certificate carries os:operator or os:admin. Talos answers Reboot, Shutdown and ServiceRestart only for those roles, and some calls (Rollback among them) for os:admin alone, which the guard then says; taloscope holds cordon, uncordon and drain to the same rule, so a read-only (os:reader) context changes nothing on the node or its Kubernetes side."
            }
            GuardId::WorkloadsDrainable => {
                "Checks the pods a drain would evict (all but DaemonSet, static and finished pods) against the PodDisruptionBudgets that select them. A budget that allows no disruption now refuses every eviction (HTTP 429) and the drain would wait until its timeout with the node cordoned; a pod two budgets select cannot be evicted at all. Scale the workload up, or fix the pods the budget is waiting for, first."
            }
            GuardId::ServiceRestartable => {
                "Checks that the node runs the service and that Talos restarts it through its API: only the kubelet and system extensions may be restarted (APIRestartAllowed); etcd, apid, containerd and the rest are Talos's own and refuse. The kubelet's pods keep running while it restarts; the node may show NotReady for a moment."
            }
            GuardId::EtcdRole => {
                "Checks that your client certificate's role may make this etcd call. Talos accepts alarm disarm and defragment from os:operator and os:admin, a snapshot also from os:etcd:backup, and member removal and leadership hand-over from os:admin only; anything less is refused by the node."
            }
            GuardId::DefragOrder => {
                "Checks that members are defragmented one at a time and the leader last. A member blocks reads and writes while it defragments; doing two at once can take quorum away, and starting with the leader forces an election in the middle. Defragment the followers first, then the leader (or forfeit its leadership first)."
            }
            GuardId::EtcdSpace => {
                "Shows each member's database size against etcd's quota (2 GiB unless quota-backend-bytes says otherwise) and checks that defragmenting brings every member under it. etcd raises NOSPACE again at the next write while a member is over quota, so a disarm only holds after a defragment has returned the free pages; if the data in use itself is over quota, compact or raise the quota first."
            }
            GuardId::MemberWithoutNode => {
                "Checks that no running node is the member being removed. Removing the member of a node that still runs etcd cuts it off: it keeps failing until it is reset and joins again. Remove only members whose machine is gone or down for good."
            }
            GuardId::EtcdLeader => {
                "Checks that the node's etcd member is the leader, and that another healthy member can take over. Forfeiting on a follower does nothing; with no healthy follower there is nobody to hand leadership to."
            }
            GuardId::SnapshotFile => {
                "Checks that the snapshot can be written where asked: the directory exists. The file is written beside it under a temporary name and renamed into place only when complete, readable by you alone: it holds every Kubernetes secret of the cluster."
            }
            GuardId::ControlPlaneCount => {
                "Warns when the new cluster gets an even number of control planes. Every control plane is an etcd member; four need three for a majority and tolerate one failure, like three, and two tolerate none, like one. Choose 1, 3 or 5, or acknowledge it."
            }
            GuardId::ProviderReady => {
                "Checks that the provider answers and has what the cluster is made from: the VM template of each role (XML-RPC) or the service template with controlplane and worker roles (OneFlow), and room for the VMs: each OneFlow role's count within its min_vms and max_vms (OneFlow refuses the service otherwise), and the VMs' count, CPU and MEMORY (and RUNNING_ counterparts) within the VM quota of your OpenNebula user and of its group, shown as the quota, what is used and what the plan needs (a limit of -1 is the default quota, -2 unlimited; oneadmin has none). Past a quota OpenNebula refuses VMs one by one, and a create that stops halfway leaves VMs to clean up. A quota your user may not read is a warning."
            }
            GuardId::NameFree => {
                "Checks that no talosconfig or kubeconfig context already has the new cluster's name. The new contexts are merged into both files under that name; taloscope refuses to overwrite one, so a name in use would leave the new cluster unreachable at the end."
            }
            GuardId::ContextFiles => {
                "Checks, before any VM exists, everything the last step (merging the new contexts into your talosconfig and kubeconfig) could refuse: both files readable and what they claim to be, no talos context of the name, lists the merge can extend line by line, no kubectl lock held, neither file read-only, their directories writable (a missing one is made, as kubectl makes it) and room on disk for the backups and the rewrite. Else a whole cluster would come up with its admin credentials saved nowhere."
            }
            GuardId::VersionPair => {
                "Checks that the Talos release runs the Kubernetes release: each Talos minor supports a window of Kubernetes minors, and outside it the kubelet and the control plane may never start."
            }
            GuardId::ConfigDelivery => {
                "Says how each machine config reaches its VM. As USER_DATA in the VM's context it holds every secret of the cluster, and anyone who may read the VM in OpenNebula can read it; maintenance mode sends it over the Talos API instead, to the certificate fingerprint you confirm."
            }
            GuardId::MaintenanceFingerprints => {
                "A headless create asks nobody whether each VM's maintenance certificate is the VM's own: Talos prints the fingerprint on the VM's console when it boots into maintenance mode (the VNC console in Sunstone), and the config, with every secret of the cluster, goes only to the certificate accepted. Give each with --fingerprint VM=SHA256, or acknowledge pinning each as it is first seen."
            }
            GuardId::KnownVms => {
                "Checks that taloscope knows which VMs are the cluster's: those its create journal recorded, or those you name with --adopt. Deleting a cluster it did not create by guessing its VMs could terminate another cluster's machines."
            }
            GuardId::DestroysData => {
                "Deleting terminates every VM of the cluster and removes its contexts: etcd, every Kubernetes object and every volume on those VMs are gone. Take a snapshot first if anything may be needed again, and type the acknowledgement."
            }
            GuardId::CapiOwned => {
                "Checks that no Cluster API management cluster among your kube contexts owns this cluster (a Cluster object whose kubeconfig secret or control-plane endpoint is this cluster's API server). Cluster API replaces machines to change them: an upgrade in place, behind its back, leaves its Machines and templates saying one version while the nodes run another, and its controller may replace the upgraded machines or stall its own rollout. Change such a cluster through its management cluster: Kubernetes by TalosControlPlane.spec.version and then each MachineDeployment's spec.template.spec.version; Talos by a copy of the infrastructure machine template with the new image, pointed to from the TalosControlPlane and the MachineDeployments."
            }
            GuardId::StuckMachine => {
                "Checks that the Machine to delete is still the one the Talos control-plane provider's rollout is stuck on (its node's etcd member reports errors while the provider waits for etcd to become healthy before scaling down), and that the control plane keeps at least one other Machine. Deleting it takes its node and etcd member away; the provider then removes the member left behind and carries on with the rollout, replacing machines one at a time."
            }
            GuardId::ScaleSettled => {
                "Checks that the TalosControlPlane or MachineDeployment is at rest: as many Machines as spec.replicas, none outdated (another version or infrastructure template than its spec: a rollout) and none being deleted. Changing spec.replicas in the middle of a rollout or another scale makes the provider pick Machines to create or delete while it is still replacing others, and a control-plane rollout then waits on etcd while it shrinks it."
            }
            GuardId::ScaleBounds => {
                "Checks that the new replica count is one the cluster can have and changes something: 1 to 7 control planes (Cluster API cannot scale a control plane to zero, and more than seven etcd members slow every write without tolerating more failures), 0 to 100 workers per MachineDeployment."
            }
            GuardId::ScaleQuorum => {
                "Checks that etcd keeps a majority of healthy voting members through the scale, read over the Talos API. Adding a control plane adds an etcd member, which needs a majority now; removing one takes a member away (the provider removes the member, then deletes the Machine), and if the members left cannot form a majority etcd stops accepting writes and the Kubernetes API fails."
            }
            GuardId::ScaleOddControlPlanes => {
                "Warns when the scale leaves an even number of control planes. Every control plane is an etcd member; four need three for a majority and tolerate one failure, like three, and two tolerate none, like one. Choose 1, 3 or 5, or acknowledge it."
            }
            GuardId::CapiRolloutSettled => {
                "Checks that the TalosControlPlane and every MachineDeployment have all their Machines up to date, ready and none deleting before their spec is changed. Changing the spec while the providers still replace Machines for an earlier change stacks two rollouts: the control-plane provider then scales down Machines of either, and etcd may lose members faster than new ones join. A rollout this upgrade started itself (the object already carries its change) is followed, not refused."
            }
            GuardId::CapiVmTemplate => {
                "Checks that the cluster's OpenNebula provider has the VM template the copied machine template names (the current one's name with the target version, e.g. talos-capi-work-worker-v1.12.0). The infrastructure provider creates every new Machine's VM from it: without it the first new Machine never gets a VM, and the rollout stalls with one Machine too many."
            }
            GuardId::EtcdStopped => {
                "Checks that the node to reboot is still the only control plane's, that its etcd still answers nothing (or only errors) and that the node answers the Talos API in the running stage. Talos starts and restarts etcd through no API call (only the kubelet and extensions), but starts it at every boot from /var/lib/etcd: with the data intact the member comes back and leads. A reboot changes no data; if etcd does not come back, follow the disaster recovery (a snapshot, then bootstrap --recover-from)."
            }
            GuardId::WaitCanFinish => {
                "Checks that what the action waits for at its end can still happen. A reboot is done only when the node is back with its etcd member healthy; a member with an etcd alarm (NOSPACE, CORRUPT) stays unhealthy whatever the node does, so the reboot would wait until its timeout with the node cordoned. Disarm the alarm first (the etcd pane's a, then disarm alarms; or taloscope etcd disarm), then reboot. A member already unhealthy for another reason may come back after the reboot, or may not: that needs its own acknowledgement."
            }
            GuardId::NotAMember => {
                "Checks, from a fresh status, that the node is still not a member: it does not answer the Talos API while etcd and the Kubernetes API both answered without naming it. A node that answers, or that etcd or Kubernetes still know, is part of the cluster, and removing its address from the talosconfig would only hide it."
            }
            GuardId::OtherNodesLeft => {
                "Checks that the talosconfig context keeps another node and another endpoint once this address is gone: a context with no endpoint reaches no node, and talosctl and taloscope could no longer talk to the cluster through it."
            }
            GuardId::ConfigAccepted => {
                "Each node is asked first, in a dry run, what it would do with the patched \
                 configuration: it validates it and names the mode it would apply it with \
                 (without a reboot, with one, staged). A node that refuses it (an invalid \
                 config, or a change that needs a reboot under no-reboot) would refuse the \
                 real apply too."
            }
            GuardId::SingleControlPlane => {
                "Warns when the cluster has only one control plane. Upgrading it reboots the only etcd member and API server: the Kubernetes API is down until it is back. Workloads keep running, but nothing can be scheduled or changed meanwhile, so it needs its own typed acknowledgement."
            }
        }
    }
}
