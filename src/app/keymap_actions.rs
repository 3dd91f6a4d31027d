//! The key tables of the node, etcd and delete actions: `a` on the nodes pane, node detail and
//! the etcd pane (the actions screen, `views::actions`, has its own), `D` on the fleet and a
//! cluster.
use super::action::Action;
use super::binding::{Binding, Key, bind};

/// On the cluster panes and node detail, ahead of their other keys.
#[rustfmt::skip]
pub(super) static FROM_PANES: &[Binding] = &[bind(&[Key::char('a')], Action::OpenActions, "actions on the selected node (reboot, drain, restart a service...) or etcd member")];

/// On the fleet and the cluster panes, after their other keys.
#[rustfmt::skip]
pub(super) static DELETE_CLUSTER: &[Binding] = &[bind(&[Key::char('D')], Action::OpenDelete, "delete the cluster: its plan and guards (VMs, contexts, journals; nothing runs yet)")];
