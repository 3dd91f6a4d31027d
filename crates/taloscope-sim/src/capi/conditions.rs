//! Setting conditions the way CAPI's helpers do: v1beta2 `metav1.Condition`
//! (cluster-api util/conditions/v1beta2: type, status, reason, message, lastTransitionTime,
//! observedGeneration) and the deprecated v1beta1 shape with a severity
//! (api/core/v1beta1/condition_types.go); the transition time moves only when the status does.
use serde_json::{Value, json};

use super::store::now_unix;
use crate::kube_api::objects::rfc3339;

/// One condition to set.
pub(crate) struct Cond<'a> {
    pub kind: &'a str,
    pub ok: bool,
    pub reason: &'a str,
    pub message: &'a str,
    /// v1beta1 severity when false: `Info`, `Warning` or `Error`.
    pub severity: &'a str,
}

fn upsert(list: &mut Value, new: Value) {
    if !list.is_array() {
        *list = json!([]);
    }
    let Some(items) = list.as_array_mut() else {
        return;
    };
    match items.iter_mut().find(|c| c["type"] == new["type"]) {
        Some(old) => {
            let mut new = new;
            if old["status"] == new["status"] {
                new["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = new;
        }
        None => items.push(new),
    }
}

/// Sets `c` in `list` in the v1beta2 shape.
pub(crate) fn set_v1beta2(list: &mut Value, c: &Cond<'_>, generation: i64) {
    let status = if c.ok { "True" } else { "False" };
    upsert(
        list,
        json!({"type": c.kind, "status": status, "reason": c.reason, "message": c.message,
            "lastTransitionTime": rfc3339(now_unix()), "observedGeneration": generation}),
    );
}

/// Sets `c` in `list` in the v1beta1 shape (no reason, message or severity when true).
pub(crate) fn set_v1beta1(list: &mut Value, c: &Cond<'_>) {
    let new = if c.ok {
        json!({"type": c.kind, "status": "True", "lastTransitionTime": rfc3339(now_unix())})
    } else {
        json!({"type": c.kind, "status": "False", "severity": c.severity, "reason": c.reason,
            "message": c.message, "lastTransitionTime": rfc3339(now_unix())})
    };
    upsert(list, new);
}

/// Whether `list` has `kind` with status True.
pub(crate) fn is_true(list: &Value, kind: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|c| c["type"] == kind && c["status"] == "True"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_stays_while_the_status_does() {
        let mut list = json!([{"type": "Ready", "status": "True", "lastTransitionTime": "then"}]);
        let c = Cond {
            kind: "Ready",
            ok: true,
            reason: "Ready",
            message: "",
            severity: "",
        };
        set_v1beta2(&mut list, &c, 3);
        assert_eq!(list[0]["lastTransitionTime"], "then");
        assert_eq!(list[0]["observedGeneration"], 3);
        set_v1beta1(&mut list, &Cond { ok: false, ..c });
        assert_ne!(list[0]["lastTransitionTime"], "then");
        assert_eq!(list[0]["severity"], "");
        assert!(!is_true(&list, "Ready"));
    }
}
