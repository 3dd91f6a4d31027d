//! The `<cluster>-talosconfig` Secret the Talos bootstrap provider keeps current
//! (siderolabs/cluster-api-bootstrap-provider-talos controllers/secrets.go
//! `reconcileClientConfig`: endpoints are the control-plane Machines' InternalIP/ExternalIP
//! addresses, sorted; key `talosconfig`). The sim's apid listens on an ephemeral port per node,
//! so each endpoint carries its port (`address:port`), as the sim's own talosconfig does.
use base64::Engine as _;
use serde_json::json;

use super::Ctx;
use super::machines::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, node_of};
use crate::model::pki::{TalosContext, render_talosconfig};

/// A client certificate of the sim's CA for the workload cluster's talosconfig.
pub(crate) struct TalosAccess {
    pub ca_pem: String,
    pub crt_pem: String,
    pub key_pem: String,
}

/// Writes the Secret with the current control-plane endpoints (no write when unchanged).
pub(crate) fn reconcile(ctx: &Ctx, access: &TalosAccess) {
    let ns = ctx.spec.namespace.as_str();
    let mut endpoints: Vec<String> = ctx
        .store
        .list("machines", Some(ns))
        .iter()
        .filter(|m| m["metadata"]["labels"].get(CONTROL_PLANE_LABEL).is_some())
        .filter_map(|m| m["metadata"]["name"].as_str())
        .filter_map(|name| node_of(ctx, name))
        .filter(|n| n.status().up)
        .map(|n| n.endpoint())
        .collect();
    endpoints.sort();
    let text = render_talosconfig(
        &access.ca_pem,
        &[TalosContext {
            name: ctx.spec.workload.clone(),
            endpoints,
            nodes: Vec::new(),
            crt_pem: access.crt_pem.clone(),
            key_pem: access.key_pem.clone(),
        }],
    );
    let value = base64::engine::general_purpose::STANDARD.encode(text);
    let name = format!("{}-talosconfig", ctx.spec.workload);
    let updated = ctx.store.modify("secrets", ns, &name, |s| {
        s["data"]["talosconfig"] = json!(value);
    });
    if !updated {
        let _ = ctx.store.create(
            "secrets",
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name, "namespace": ns,
                    "labels": {CLUSTER_NAME_LABEL: ctx.spec.workload}},
                "type": "Opaque", "data": {"talosconfig": value}}),
        );
    }
}
