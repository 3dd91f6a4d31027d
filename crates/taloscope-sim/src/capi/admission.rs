//! The validating admission webhooks the providers install on the management cluster, and the
//! log of every request they refused (tests read it to prove a run asked nothing refusable).
//! The Talos bootstrap provider's (cluster-api-bootstrap-provider-talos
//! config/webhook/manifests.yaml, from the `+kubebuilder:webhook` markers of
//! api/v1alpha3/talosconfig_webhook.go and talosconfigtemplate_webhook.go) are the only
//! validating ones of the scenario: the control-plane provider's webhook only sets defaults
//! (cluster-api-control-plane-provider-talos api/v1alpha3/taloscontrolplane_webhook.go).
use serde_json::Value;

/// One request a webhook refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionRefusal {
    /// The webhook's name ("vtalosconfigtemplate.cluster.x-k8s.io").
    pub webhook: String,
    /// "CREATE" or "UPDATE".
    pub operation: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// What the API server answered, `admission webhook "<name>" denied the request: ...`.
    pub message: String,
}

/// The operation an admission request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    /// An update of the object itself (its `/status` and `/scale` are other resources the
    /// webhooks' rules do not name).
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
        }
    }
}

/// talosconfig_types.go `HostnameSource` values the webhook's `validate` accepts.
const HOSTNAME_SOURCES: [&str; 3] = ["", "MachineName", "InfrastructureName"];

/// The refusal of the request that would store `new` (of `kind`) over `old`, if a webhook
/// refuses it. controller-runtime hands the validator's `NewBadRequest` / `NewInvalid` to
/// the API server, which prefixes `admission webhook "<name>" denied the request: `.
pub(crate) fn review(
    kind: &str,
    operation: Operation,
    old: Option<&Value>,
    new: &Value,
) -> Option<AdmissionRefusal> {
    let (webhook, denial) = match (kind, operation) {
        // talosconfigtemplate_webhook.go `ValidateUpdate`: any change of the spec.
        ("TalosConfigTemplate", Operation::Update) => (
            "vtalosconfigtemplate.cluster.x-k8s.io",
            spec_changed(old, new).then(|| "TalosConfigTemplate.Spec is immutable".to_string()),
        ),
        // talosconfig_webhook.go `ValidateUpdate` (spec immutable), then `validate` on create
        // and update: spec.hostname.source is one of the known sources.
        ("TalosConfig", _) => (
            "vtalosconfig.cluster.x-k8s.io",
            if operation == Operation::Update && spec_changed(old, new) {
                Some("TalosConfig.Spec is immutable".to_string())
            } else {
                hostname_source_invalid(new)
            },
        ),
        _ => return None,
    };
    let message = denial?;
    let meta = &new["metadata"];
    Some(AdmissionRefusal {
        webhook: webhook.to_string(),
        operation: operation.as_str().to_string(),
        kind: kind.to_string(),
        namespace: meta["namespace"].as_str().unwrap_or_default().to_string(),
        name: meta["name"].as_str().unwrap_or_default().to_string(),
        message: format!("admission webhook \"{webhook}\" denied the request: {message}"),
    })
}

fn spec_changed(old: Option<&Value>, new: &Value) -> bool {
    old.is_some_and(|old| old["spec"] != new["spec"])
}

fn hostname_source_invalid(new: &Value) -> Option<String> {
    let source = new["spec"]["hostname"]["source"]
        .as_str()
        .unwrap_or_default();
    if HOSTNAME_SOURCES.contains(&source) {
        return None;
    }
    let name = new["metadata"]["name"].as_str().unwrap_or_default();
    Some(format!(
        "TalosConfig.bootstrap.cluster.x-k8s.io \"{name}\" is invalid: spec.hostname.source: Invalid value: \"{source}\": valid values are: [\"MachineName\" \"InfrastructureName\"]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(version: &str) -> Value {
        json!({"metadata": {"name": "md-0", "namespace": "default"},
            "spec": {"template": {"spec": {"generateType": "worker", "talosVersion": version}}}})
    }

    #[test]
    fn a_talos_config_templates_spec_cannot_change() {
        let old = template("v1.11");
        let refused = review(
            "TalosConfigTemplate",
            Operation::Update,
            Some(&old),
            &template("v1.12"),
        )
        .expect("refused");
        assert_eq!(
            refused.message,
            "admission webhook \"vtalosconfigtemplate.cluster.x-k8s.io\" denied the request: TalosConfigTemplate.Spec is immutable"
        );
        assert_eq!(refused.name, "md-0");
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        assert!(
            review(
                "TalosConfigTemplate",
                Operation::Update,
                Some(&old),
                &labelled
            )
            .is_none()
        );
        assert!(review("TalosConfigTemplate", Operation::Create, None, &old).is_none());
    }

    #[test]
    fn a_talos_configs_spec_cannot_change_and_its_hostname_source_is_checked() {
        let old = json!({"metadata": {"name": "m"}, "spec": {"generateType": "controlplane"}});
        let mut new = old.clone();
        new["spec"]["talosVersion"] = json!("v1.12");
        let refused = review("TalosConfig", Operation::Update, Some(&old), &new).expect("refused");
        assert!(refused.message.ends_with("TalosConfig.Spec is immutable"));
        let mut bad = old.clone();
        bad["spec"]["hostname"] = json!({"source": "Nowhere"});
        let refused = review("TalosConfig", Operation::Create, None, &bad).expect("refused");
        assert!(
            refused.message.contains("spec.hostname.source"),
            "{refused:?}"
        );
        assert!(review("TalosConfig", Operation::Create, None, &old).is_none());
        assert!(review("Machine", Operation::Update, Some(&old), &new).is_none());
    }
}
