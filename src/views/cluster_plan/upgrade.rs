//! The CAPI-way upgrade a cluster plan asks for: the target the in-place plan would choose
//! among the same releases learned at run time, on the cluster in use, which Cluster API owns.
//! Pure.
use std::collections::BTreeMap;

use crate::app::message::Message;
use crate::app::screens::Shared;
use crate::capi::CapiOwner;
use crate::upgrade::capi::{CapiProduct, product_name};
use crate::upgrade::kubernetes::chosen_kubernetes_target;
use crate::upgrade::{LearnedReleases, chosen_talos_target};
use crate::views::plan::status_in_use;

/// What the console reads for a CAPI-way plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapiPlanRequest {
    pub cluster: String,
    pub owner: CapiOwner,
    pub product: CapiProduct,
    /// The target as `spec.version` or a template names it ("v1.34.2"), and as the dispatcher
    /// and the journal do ("1.34.2" for Kubernetes).
    pub version: String,
    pub target: String,
}

/// The request for the plan `words` name (the product's word, then the target, if any) on the
/// cluster in use, which Cluster API owns, its Talos target chosen among the releases `learned`
/// for it (the built-in table until they arrive); or why there is none.
pub(super) fn request_of(
    words: &[String],
    shared: &Shared,
    learned: &BTreeMap<String, LearnedReleases>,
) -> Result<CapiPlanRequest, Message> {
    let cluster = shared.cluster_in_use()?;
    let owner = shared.fleet.capi.owner(cluster).cloned();
    let owner =
        owner.ok_or_else(|| Message::warn(format!("{cluster} is not owned by Cluster API")))?;
    let status = status_in_use(shared)?;
    let named = words.get(1).map(String::as_str);
    let product = match words.first().map(String::as_str) {
        Some(word) if word == product_name(CapiProduct::Kubernetes) => CapiProduct::Kubernetes,
        _ => CapiProduct::TalosOs,
    };
    let releases = (learned.get(cluster).cloned())
        .unwrap_or_else(|| LearnedReleases::built_in("not learned yet"));
    let chosen = match product {
        CapiProduct::Kubernetes => chosen_kubernetes_target(status, named),
        CapiProduct::TalosOs => chosen_talos_target(status, named, &releases),
    };
    let chosen = chosen.map_err(Message::warn)?.1;
    let version = format!("v{}", chosen.to_string().trim_start_matches('v'));
    let target = match product {
        CapiProduct::Kubernetes => version.trim_start_matches('v').to_string(),
        CapiProduct::TalosOs => version.clone(),
    };
    Ok(CapiPlanRequest {
        cluster: cluster.to_string(),
        owner,
        product,
        version,
        target,
    })
}
