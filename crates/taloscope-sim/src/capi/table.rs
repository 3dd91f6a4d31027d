//! Server-side print tables for the CAPI resources (`kubectl get`), with the columns of each
//! CRD's `+kubebuilder:printcolumn` markers (cluster-api api/core/v1beta2/*_types.go,
//! cluster-api-control-plane-provider-talos api/v1alpha3/taloscontrolplane_types.go).
use serde_json::{Value, json};

use crate::kube_api::objects::human_age;

/// Seconds since the epoch of an RFC 3339 UTC timestamp as the sim writes them.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let (date, time) = text.trim_end_matches('Z').split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (t.next()??, t.next()??, t.next()??);
    // Days from civil (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

fn condition(obj: &Value, kind: &str) -> Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .map(|c| c["status"].clone())
        .unwrap_or(json!(""))
}

fn text(v: &Value) -> Value {
    match v {
        Value::Null => json!(""),
        other => other.clone(),
    }
}

/// (column names, cells) for an object of `kind` as served in `version`.
fn columns(kind: &str, version: &str, o: &Value, age: String) -> (Vec<&'static str>, Vec<Value>) {
    let s = &o["status"];
    let beta1 = version == "v1beta1";
    match kind {
        "Machine" => (
            vec!["Cluster", "Node Name", "Ready", "Phase", "Age", "Version"],
            vec![
                text(&o["spec"]["clusterName"]),
                text(&s["nodeRef"]["name"]),
                condition(o, "Ready"),
                text(&s["phase"]),
                json!(age),
                text(&o["spec"]["version"]),
            ],
        ),
        "MachineDeployment" | "MachineSet" => {
            let up_to_date = if beta1 {
                text(&s["updatedReplicas"])
            } else {
                text(&s["upToDateReplicas"])
            };
            (
                vec![
                    "Cluster",
                    "Desired",
                    "Current",
                    "Ready",
                    "Available",
                    "Up-to-date",
                    "Age",
                    "Version",
                ],
                vec![
                    text(&o["spec"]["clusterName"]),
                    text(&o["spec"]["replicas"]),
                    text(&s["replicas"]),
                    text(&s["readyReplicas"]),
                    text(&s["availableReplicas"]),
                    up_to_date,
                    json!(age),
                    text(&o["spec"]["template"]["spec"]["version"]),
                ],
            )
        }
        "Cluster" => (vec!["Phase", "Age"], vec![text(&s["phase"]), json!(age)]),
        "TalosControlPlane" => (
            vec![
                "Ready",
                "Initialized",
                "Replicas",
                "Ready Replicas",
                "Unavailable Replicas",
                "Age",
            ],
            vec![
                text(&s["ready"]),
                text(&s["initialized"]),
                text(&s["replicas"]),
                text(&s["readyReplicas"]),
                text(&s["unavailableReplicas"]),
                json!(age),
            ],
        ),
        _ => (vec!["Age"], vec![json!(age)]),
    }
}

/// A `meta.k8s.io/v1` Table of `objects` (all of one kind and version).
pub(crate) fn table(kind: &str, version: &str, objects: &[Value], now: i64, rv: u64) -> Value {
    let mut names = vec!["Name"];
    let mut rows = Vec::new();
    for o in objects {
        let created = o["metadata"]["creationTimestamp"]
            .as_str()
            .and_then(parse_rfc3339)
            .unwrap_or(now);
        let (cols, cells) = columns(kind, version, o, human_age(now - created));
        if names.len() == 1 {
            names.extend(cols);
        }
        let mut all = vec![o["metadata"]["name"].clone()];
        all.extend(cells);
        rows.push(
            json!({"cells": all, "object": {"kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}}),
        );
    }
    if objects.is_empty() {
        names.extend(columns(kind, version, &json!({}), String::new()).0);
    }
    let defs: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({"name": n, "type": "string", "format": if *n == "Name" { "name" } else { "" },
            "description": "", "priority": 0})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv.to_string()}, "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube_api::objects::rfc3339;

    #[test]
    fn timestamps_read_back() {
        for t in [0, 951_782_400, 1_735_689_599, 1_800_000_123] {
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        }
    }

    #[test]
    fn machine_rows_carry_node_and_phase() {
        let m = json!({"metadata": {"name": "m1", "creationTimestamp": rfc3339(100)},
            "spec": {"clusterName": "c", "version": "v1.34.1"},
            "status": {"nodeRef": {"name": "n1"}, "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]}});
        let t = table("Machine", "v1beta2", &[m], 160, 7);
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["m1", "c", "n1", "True", "Running", "60s", "v1.34.1"])
        );
    }
}
