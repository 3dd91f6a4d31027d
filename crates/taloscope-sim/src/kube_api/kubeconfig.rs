//! Writes the sim's kubeconfig with the kube crate's own types: one context per
//! cluster named `admin@<cluster>`, as `talosctl kubeconfig` names them.
use std::path::Path;

use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use crate::model::kube_pki::CertPair;

/// One cluster's entry: server URL, CA and client credentials.
pub struct KubeconfigEntry {
    pub cluster: String,
    /// Context name; `admin@<cluster>` for the ordinary admin entry.
    pub context: String,
    pub server: String,
    pub ca_b64: String,
    pub client: CertPair,
}

pub fn build(entries: &[KubeconfigEntry]) -> Kubeconfig {
    let mut cfg = Kubeconfig {
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        current_context: entries.first().map(|e| e.context.clone()),
        ..Kubeconfig::default()
    };
    for e in entries {
        if !cfg.clusters.iter().any(|c| c.name == e.cluster) {
            cfg.clusters.push(NamedCluster {
                name: e.cluster.clone(),
                cluster: Some(Cluster {
                    server: Some(e.server.clone()),
                    certificate_authority_data: Some(e.ca_b64.clone()),
                    ..Cluster::default()
                }),
                other: Default::default(),
            });
        }
        cfg.auth_infos.push(NamedAuthInfo {
            name: e.context.clone(),
            auth_info: Some(AuthInfo {
                client_certificate_data: Some(e.client.cert_b64()),
                client_key_data: Some(e.client.key_b64().into()),
                ..AuthInfo::default()
            }),
            other: Default::default(),
        });
        cfg.contexts.push(NamedContext {
            name: e.context.clone(),
            context: Some(Context {
                cluster: e.cluster.clone(),
                user: Some(e.context.clone()),
                namespace: Some("default".into()),
                ..Context::default()
            }),
            other: Default::default(),
        });
    }
    cfg
}

/// Writes `cfg` to `path` as YAML, readable by the owner only.
pub fn write(path: &Path, cfg: &Kubeconfig) -> std::io::Result<()> {
    let text = serde_saphyr::to_string(cfg).map_err(std::io::Error::other)?;
    write_private(path, &text)
}

/// The kubeconfig at `path` with only `context` (its cluster and user), as the text a
/// kubeconfig Secret carries.
pub fn only_context(path: &Path, context: &str) -> std::io::Result<String> {
    let mut cfg = Kubeconfig::read_from(path).map_err(std::io::Error::other)?;
    cfg.contexts.retain(|c| c.name == context);
    let named = cfg
        .contexts
        .first()
        .and_then(|c| c.context.clone())
        .ok_or_else(|| {
            std::io::Error::other(format!("{}: no context {context}", path.display()))
        })?;
    cfg.clusters.retain(|c| c.name == named.cluster);
    cfg.auth_infos
        .retain(|a| named.user.as_deref() == Some(a.name.as_str()));
    cfg.current_context = Some(context.to_string());
    serde_saphyr::to_string(&cfg).map_err(std::io::Error::other)
}

pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
