//! What a Talos node checks in a machine configuration it is given: the documents parsed, the
//! v1alpha1 document found, its validation (errors and warnings, worded as upstream's), which
//! changes it can take without a reboot (up to v1.13) and the text diff a dry run shows.
use serde_json::Value;

/// The documents of a machine configuration; Err is the parser's message.
pub fn parse_documents(data: &[u8]) -> Result<Vec<Value>, String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(text).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The v1alpha1 document: the one without `kind` whose `version` is `v1alpha1`
/// (siderolabs/talos pkg/machinery/config/configloader/internal/decoder/decoder.go reads a
/// document without `kind` as the legacy v1alpha1 config).
pub fn v1alpha1(docs: &[Value]) -> Option<&Value> {
    docs.iter()
        .find(|d| d.get("kind").is_none() && d["version"] == "v1alpha1")
}

/// Errors joined as hashicorp/go-multierror's `ListFormatFunc` prints them.
fn multierror(errors: &[String]) -> String {
    if errors.len() == 1 {
        return format!("1 error occurred:\n\t* {}\n\n", errors[0]);
    }
    let points: Vec<String> = errors.iter().map(|e| format!("* {e}")).collect();
    format!(
        "{} errors occurred:\n\t{}\n\n",
        errors.len(),
        points.join("\n\t")
    )
}

/// The machine type as `machine.ParseType` reads it (siderolabs/talos
/// pkg/machinery/config/machine/machine.go): `join` and an empty type are workers.
fn parse_type(text: &str) -> Option<&'static str> {
    match text {
        "init" => Some("init"),
        "controlplane" => Some("controlplane"),
        "worker" | "join" | "" => Some("worker"),
        _ => None,
    }
}

fn non_empty(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

/// The v1alpha1 document's validation, as far as the sim's configs reach
/// (siderolabs/talos pkg/machinery/config/types/v1alpha1/v1alpha1_validation.go `Validate`,
/// wrapped by pkg/machinery/config/container/container.go `Validate`): Ok holds the warnings,
/// Err the message the node answers with.
pub fn validate(config: &Value) -> Result<Vec<String>, String> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let machine = &config["machine"];
    if !machine.is_object() {
        errors.push("machine instructions are required".to_string());
    } else {
        let given = machine["type"].as_str().unwrap_or("");
        let ca = &machine["ca"];
        let has_ca = ca.is_object();
        if let Some(t) = parse_type(given)
            && t != given
        {
            warnings.push(format!("use {t:?} instead of {given:?} for machine type"));
        }
        let accepted = machine["acceptedCAs"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        if !has_ca && !accepted {
            errors.push(
                "issuing CA or some accepted CAs are required (.machine.ca, machine.acceptedCAs)"
                    .into(),
            );
        }
        match parse_type(given) {
            Some("init" | "controlplane") => {
                if !has_ca {
                    errors.push("issuing CA is required (.machine.ca)".into());
                } else if !non_empty(&ca["key"]) {
                    errors.push(
                        "issuing CA key is required for controlplane nodes (.machine.ca.key)"
                            .into(),
                    );
                }
            }
            Some(_) => {
                if has_ca && non_empty(&ca["key"]) {
                    errors.push(
                        "issuing Talos API CA key is not allowed on non-controlplane nodes (.machine.ca)"
                            .into(),
                    );
                }
                if has_ca && !non_empty(&ca["crt"]) && !accepted {
                    errors.push("trusted CA certificates are required on non-controlplane nodes (.machine.ca.crt, .machine.acceptedCAs)".into());
                }
                if non_empty(&config["cluster"]["ca"]["key"]) {
                    errors.push(
                        "issuing Kubernetes API CA key is not allowed on non-controlplane nodes (.cluster.ca)"
                            .into(),
                    );
                }
            }
            None => errors.push(format!("unknown machine type {given:?}")),
        }
        if config["persist"] == Value::Bool(false) {
            errors.push(".persist should be enabled".into());
        }
        if let Some(mirrors) = machine["registries"]["mirrors"].as_object() {
            for (registry, mirror) in mirrors {
                if mirror.is_null() {
                    errors.push(format!("registries.mirrors[{registry:?}] is null"));
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(warnings)
    } else {
        let inner = format!("v1alpha1.Config: {}", multierror(&errors));
        Err(multierror(&[inner]))
    }
}

/// The `machine` keys a node up to v1.13 applies without a reboot, besides `debug` and
/// `cluster` (siderolabs/talos internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_runtime.go
/// `CanApplyImmediate`, the same list from v1.10 to v1.13).
const IMMEDIATE_MACHINE_KEYS: &[&str] = &[
    "ca",
    "acceptedCAs",
    "time",
    "certSANs",
    "install",
    "network",
    "sysfs",
    "sysctls",
    "logging",
    "controlPlane",
    "kubelet",
    "kernel",
    "registries",
    "pods",
    "seccompProfiles",
    "nodeAnnotations",
    "nodeLabels",
    "nodeTaints",
];

/// The `machine.features` keys applied without a reboot (same function).
const IMMEDIATE_FEATURE_KEYS: &[&str] = &[
    "kubernetesTalosAPIAccess",
    "kubePrism",
    "hostDNS",
    "imageCache",
    "nodeAddressSortAlgorithm",
];

/// `new` with every part a node applies at once replaced by `current`'s, as
/// `CanApplyImmediate` copies them over before comparing.
fn without_immediate(current: &Value, new: &Value) -> Value {
    let mut out = new.clone();
    let Some(obj) = out.as_object_mut() else {
        return out;
    };
    for key in ["debug", "cluster"] {
        obj.remove(key);
        if let Some(v) = current.get(key) {
            obj.insert(key.to_string(), v.clone());
        }
    }
    if let (Some(machine), Some(cur_machine)) = (
        obj.get_mut("machine").and_then(Value::as_object_mut),
        current["machine"].as_object(),
    ) {
        for key in IMMEDIATE_MACHINE_KEYS {
            machine.remove(*key);
            if let Some(v) = cur_machine.get(*key) {
                machine.insert(key.to_string(), v.clone());
            }
        }
        if let (Some(features), Some(cur_features)) = (
            machine.get_mut("features").and_then(Value::as_object_mut),
            cur_machine.get("features").and_then(Value::as_object),
        ) {
            for key in IMMEDIATE_FEATURE_KEYS {
                features.remove(*key);
                if let Some(v) = cur_features.get(*key) {
                    features.insert(key.to_string(), v.clone());
                }
            }
        }
    }
    out
}

/// Whether a node up to v1.13 takes `new` without a reboot; Err is upstream's refusal with the
/// diff of what needs one (`CanApplyImmediate`: "this config change can't be applied in
/// immediate mode").
pub fn immediate_change(current: &Value, new: &Value) -> Result<(), String> {
    let kept = without_immediate(current, new);
    if &kept == current {
        return Ok(());
    }
    let diff = text_diff(&yaml(current), &yaml(&kept));
    Err(format!(
        "this config change can't be applied in immediate mode\ndiff:\n{diff}"
    ))
}

/// A document as YAML text (the encoder's output; empty if it cannot encode).
pub fn yaml(doc: &Value) -> String {
    serde_saphyr::to_string(doc).unwrap_or_default()
}

/// The documents of a configuration as one YAML stream.
pub fn yaml_stream(docs: &[Value]) -> String {
    docs.iter().map(yaml).collect::<Vec<_>>().join("---\n")
}

/// Lines past which a diff is not computed (textdiff.go's `MaxLines` is 75,000; the sim's
/// quadratic diff stops sooner).
const MAX_DIFF_LINES: usize = 4_000;

/// A unified diff of two texts with 3 lines of context, headed `--- a` / `+++ b`, empty when
/// equal (siderolabs/talos pkg/machinery/textdiff/textdiff.go `Diff`).
pub fn text_diff(a: &str, b: &str) -> String {
    if a == b {
        return String::new();
    }
    let old: Vec<&str> = a.lines().collect();
    let new: Vec<&str> = b.lines().collect();
    if old.len() + new.len() > MAX_DIFF_LINES {
        return format!(
            "@@ -1,{} +1,{} @@ diff too large to display\n",
            old.len(),
            new.len()
        );
    }
    // Longest common subsequence table, from the ends.
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // (tag, old index, new index, text)
    let mut ops: Vec<(char, usize, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push((' ', i, j, old[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i, j, old[i]));
            i += 1;
        } else {
            ops.push(('+', i, j, new[j]));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|k| ops[*k].0 != ' ').collect();
    let mut out = String::from("--- a\n+++ b\n");
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(3);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 6 {
            end = changed[k];
            k += 1;
        }
        let end = (end + 3).min(ops.len() - 1);
        let hunk = &ops[start..=end];
        let old_count = hunk.iter().filter(|o| o.0 != '+').count();
        let new_count = hunk.iter().filter(|o| o.0 != '-').count();
        out.push_str(&format!(
            "@@ -{},{old_count} +{},{new_count} @@\n",
            hunk[0].1 + 1,
            hunk[0].2 + 1
        ));
        for (tag, _, _, text) in hunk {
            out.push_str(&format!("{tag}{text}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn worker() -> Value {
        json!({"version": "v1alpha1", "persist": true,
               "machine": {"type": "worker", "ca": {"crt": "Y3J0"}, "env": {}},
               "cluster": {"token": "t"}})
    }

    #[test]
    fn a_worker_config_validates_and_join_is_warned() {
        assert_eq!(validate(&worker()), Ok(vec![]));
        let mut join = worker();
        join["machine"]["type"] = json!("join");
        assert_eq!(
            validate(&join),
            Ok(vec![
                r#"use "worker" instead of "join" for machine type"#.to_string()
            ])
        );
    }

    #[test]
    fn errors_read_as_upstream_multierror() {
        let mut bad = worker();
        bad["machine"]["type"] = json!("router");
        assert_eq!(
            validate(&bad).unwrap_err(),
            "1 error occurred:\n\t* v1alpha1.Config: 1 error occurred:\n\t* unknown machine type \"router\"\n\n\n\n"
        );
        let mut two = worker();
        two["machine"]["ca"]["key"] = json!("a2V5");
        two["persist"] = json!(false);
        let message = validate(&two).unwrap_err();
        assert!(message.contains("2 errors occurred"), "{message}");
        assert!(message.contains("issuing Talos API CA key is not allowed"));
    }

    #[test]
    fn kubelet_and_mirrors_apply_at_once_env_needs_a_reboot() {
        let current = worker();
        let mut new = current.clone();
        new["machine"]["kubelet"] = json!({"extraArgs": {"max-pods": "150"}});
        new["machine"]["registries"] =
            json!({"mirrors": {"ghcr.io": {"endpoints": ["https://m"]}}});
        new["cluster"]["token"] = json!("other");
        assert_eq!(immediate_change(&current, &new), Ok(()));
        new["machine"]["env"] = json!({"HTTP_PROXY": "http://127.0.0.1:3128"});
        let refusal = immediate_change(&current, &new).unwrap_err();
        assert!(
            refusal.starts_with(
                "this config change can't be applied in immediate mode\ndiff:\n--- a\n+++ b\n"
            ),
            "{refusal}"
        );
        assert!(refusal.contains("+    HTTP_PROXY"), "{refusal}");
    }

    #[test]
    fn the_diff_is_unified_with_context() {
        let diff = text_diff("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(diff, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
        assert_eq!(text_diff("x\n", "x\n"), "");
    }
}
