//! Which upgrade plan `u` / `U` open (the in-place plan screen of the Talos or Kubernetes kind,
//! the CAPI way's on a cluster Cluster API owns, or the progress of a rollout that has not
//! ended), `:rollout`, and the rollout another run holds on a cluster. Pure, like the rest of
//! update.
use super::action::Effect;
use super::message::Message;
use super::plan_screen::{GuardReading, GuardSource};
use super::screen::Screen;
use super::screens::ScreenName;
use super::shell::PROGRESS;
use super::state::AppState;
use super::update_panes::{cluster_in_use, open_selected_cluster};
use crate::rollout::LeaseReading;
use crate::upgrade::capi::{CapiProduct, product_name};
use crate::upgrade::{InPlaceUpgrade, RolloutInProgress};

/// The cluster plan screen's name (`views::cluster_plan`), the CAPI-way upgrade's: opened with
/// `upgrade`, the product's word and the target named, if any.
const CLUSTER_PLAN: &str = "cluster-plan";

/// What the plans of a cluster read their guards over, from the console's state.
impl GuardSource for AppState {
    fn guard_reading(&self, cluster: &str) -> GuardReading<'_> {
        GuardReading {
            live: self.fleet.cluster(cluster),
            discovered: self.clusters.iter().find(|c| c.name == cluster),
            other_rollout: other_rollout_read(self, cluster),
            capi_owner: self.fleet.capi.owner(cluster),
            capi_tree: self.fleet.capi.owned_tree(cluster).map(|(_, tree)| tree),
            config: &self.provision.config,
        }
    }
}

/// A rollout on `cluster` the plan must wait for: this console's own unfinished one, else
/// another console's, from its rollout Lease; or why the Lease could not be read when this
/// console runs none there, for the guards that must not take an unread Lease for a free one.
pub fn other_rollout_read(state: &AppState, cluster: &str) -> LeaseReading {
    let own = rollout_of(state, cluster);
    match (own, state.fleet.cluster(cluster)) {
        (Some(own), _) => Ok(Some(own)),
        (None, Some(live)) => live.status.other_rollout_read(&state.identity),
        (None, None) => Ok(None),
    }
}

/// This console's in-place upgrade of `cluster` that has not ended, as the plans' guards see it.
fn rollout_of(state: &AppState, cluster: &str) -> Option<RolloutInProgress> {
    let p = state.progress().filter(|p| p.cluster == cluster)?;
    p.rollout_in_progress(&state.identity)
}

/// The cluster an upgrade plan opens for (`u`, `:upgrade`): the one in use on the cluster
/// screens, else the fleet's selection; or `None` (said on the message line).
pub(super) fn usable_cluster(state: &mut AppState) -> Option<String> {
    if state.screen == Screen::Fleet {
        open_selected_cluster(state);
    }
    cluster_in_use(state)
}

/// `u`, `:upgrade [vX.Y.Z]` (`upgrade` Talos OS) and `U`, `:upgrade-k8s [VERSION]`
/// (Kubernetes): the progress screen while this console's rollout of the cluster has not ended,
/// the CAPI-way plan on a cluster Cluster API owns, else the in-place plan screen of the kind
/// (`screen`, `views::upgrade_plan`), opened with the target named, if any.
pub fn open_plan(
    state: &mut AppState,
    screen: ScreenName,
    upgrade: InPlaceUpgrade,
    target: Option<String>,
) -> Vec<Effect> {
    let Some(cluster) = usable_cluster(state) else {
        return Vec::new();
    };
    // This console's unfinished rollout of the cluster shows instead of a plan (one rollout
    // per cluster, whatever its kind).
    if rollout_of(state, &cluster).is_some() {
        let hint = if state.operation_running() {
            "Space pauses, c cancels"
        } else {
            "r resumes it"
        };
        state.message = Some(Message::info(format!(
            "a rollout of {cluster} has not ended: {hint}"
        )));
        state.screen = Screen::Module(PROGRESS);
        return Vec::new();
    }
    if !state.fleet.cluster(&cluster).is_some_and(|l| l.has_data()) {
        state.message = Some(Message::no_status_yet(&cluster));
        return Vec::new();
    }
    // Cluster API owns it: the CAPI way, never in place.
    if state.fleet.capi.owner(&cluster).is_some() {
        let product = product_name(CapiProduct::of(upgrade)).to_string();
        let words = ["upgrade".to_string(), product].into_iter().chain(target);
        return super::shell::open_with(state, CLUSTER_PLAN, words.collect());
    }
    super::shell::open_with(state, screen, target.into_iter().collect())
}

/// `:rollout`: the progress screen of the cluster in use's rollout.
pub fn show_rollout(state: &mut AppState) -> Vec<Effect> {
    let Some(cluster) = usable_cluster(state) else {
        return Vec::new();
    };
    if state.progress().is_some_and(|p| p.cluster == cluster) {
        state.screen = Screen::Module(PROGRESS);
    } else {
        state.message = Some(Message::info(format!(
            "no rollout of {cluster} from this console (u plans one)"
        )));
    }
    Vec::new()
}
