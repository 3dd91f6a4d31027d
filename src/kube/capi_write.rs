//! What the CAPI-way upgrade reads and writes on a management cluster, as raw JSON: one
//! object by group, kind and name, a merge patch of it, a new object (a copied machine
//! template), and a key of a Secret the providers keep (`<cluster>-talosconfig`).
use base64::Engine;
use reqwest::Method;
use serde_json::Value;

use super::capi::KUBECONFIG_LIMIT;
use super::client::{KubeClient, KubeError};
use super::rest::Body;

/// Where one Cluster API object lives: its group, kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl std::fmt::Display for ObjectRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} in namespace {}",
            self.kind, self.name, self.namespace
        )
    }
}

impl KubeClient {
    /// `/apis/<group>/<version>/namespaces/<ns>/<plural>`, the kind's collection, from
    /// discovery; an error naming the kind when the server does not serve it.
    async fn collection(&self, object: &ObjectRef<'_>) -> Result<String, KubeError> {
        let path = self
            .resource_path(object.group, object.kind)
            .await?
            .ok_or_else(|| {
                self.api_error(format!(
                    "{}.{} is not served by this management cluster",
                    object.kind, object.group
                ))
            })?;
        // resource_path gives `/apis/<group>/<version>/<plural>`: put the namespace in.
        let (base, plural) = path.rsplit_once('/').unwrap_or((&path, ""));
        Ok(format!("{base}/namespaces/{}/{plural}", object.namespace))
    }

    /// One object as JSON; `None` when it is not there.
    pub async fn capi_object(&self, object: &ObjectRef<'_>) -> Result<Option<Value>, KubeError> {
        let path = format!("{}/{}", self.collection(object).await?, object.name);
        self.rest().get_opt(&path).await.map_err(|e| self.error(e))
    }

    /// Applies a JSON merge patch (RFC 7386) to one object; returns the object as written.
    pub async fn capi_merge_patch(
        &self,
        object: &ObjectRef<'_>,
        patch: &Value,
    ) -> Result<Value, KubeError> {
        let path = format!("{}/{}", self.collection(object).await?, object.name);
        self.rest()
            .call(Method::PATCH, &path, &[], Some(Body::merge_patch(patch)))
            .await
            .map_err(|e| self.error(e))
    }

    /// Creates `body` (its metadata names it) in the collection of `object`'s kind.
    pub async fn capi_create(
        &self,
        object: &ObjectRef<'_>,
        body: &Value,
    ) -> Result<Value, KubeError> {
        let path = self.collection(object).await?;
        self.rest()
            .call(Method::POST, &path, &[], Some(Body::json(body)))
            .await
            .map_err(|e| self.error(e))
    }

    /// The text under `key` of Secret `namespace/name`; `None` when the Secret or the key is
    /// not there, or the value is larger than a kubeconfig may be.
    pub async fn capi_secret_text(
        &self,
        namespace: &str,
        name: &str,
        key: &str,
    ) -> Result<Option<String>, KubeError> {
        let path = format!("/api/v1/namespaces/{namespace}/secrets/{name}");
        let secret: Option<Value> = self
            .rest()
            .get_opt(&path)
            .await
            .map_err(|e| self.error(e))?;
        let Some(value) = secret.as_ref().and_then(|s| s["data"][key].as_str()) else {
            return Ok(None);
        };
        if value.len() > KUBECONFIG_LIMIT {
            return Ok(None);
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(value)
            .map_err(|e| self.api_error(format!("secret {namespace}/{name}: {e}")))?;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }
}
