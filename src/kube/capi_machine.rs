//! Deleting one Cluster API Machine on a management cluster, as `kubectl delete machine`
//! does: CAPI's machine controller then drains it and deletes its infrastructure and Node
//! (kubernetes-sigs/cluster-api internal/controllers/machine/machine_controller.go
//! `reconcileDelete`); its owner (TalosControlPlane, MachineSet) makes a replacement.
use reqwest::Method;

use super::capi::CAPI_GROUP;
use super::capi_model::CapiVersion;
use super::client::{KubeClient, KubeError};
use super::rest::CallError;

impl KubeClient {
    /// Deletes Machine `namespace/name`, read in `version`; `Ok(false)` when it was gone already.
    pub async fn delete_capi_machine(
        &self,
        version: CapiVersion,
        namespace: &str,
        name: &str,
    ) -> Result<bool, KubeError> {
        let path = format!(
            "/apis/{CAPI_GROUP}/{}/namespaces/{namespace}/machines/{name}",
            version.as_str()
        );
        match self
            .rest()
            .call::<serde_json::Value>(Method::DELETE, &path, &[], None)
            .await
        {
            Ok(_) => Ok(true),
            Err(CallError::Api(status)) if status.code == 404 => Ok(false),
            Err(e) => Err(self.error(e)),
        }
    }
}
