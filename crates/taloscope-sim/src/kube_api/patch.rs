//! The patch bodies kubectl and clients send: JSON merge patch (RFC 7386, also taken for
//! strategic merge where the patched objects have no merge-keyed lists) and JSON patch
//! (RFC 6902: add, replace, remove, test).
use serde_json::{Value, json};

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Value::Object(existing) = target {
        for (key, value) in fields {
            if value.is_null() {
                existing.remove(key);
            } else {
                merge_patch(existing.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// `/a/b~1c/0` → `["a", "b/c", "0"]` (RFC 6901 escapes).
fn pointer_tokens(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// RFC 6902 operations `add`, `replace`, `remove` and `test`, all or nothing.
pub(crate) fn json_patch(target: &mut Value, ops: &[Value]) -> Result<(), String> {
    let mut work = target.clone();
    for op in ops {
        let path = op["path"]
            .as_str()
            .ok_or_else(|| "a JSON patch operation without a path".to_string())?;
        let tokens = pointer_tokens(path);
        let Some((last, parents)) = tokens.split_last() else {
            return Err(format!("cannot patch the whole object at {path:?}"));
        };
        let verb = op["op"].as_str().unwrap_or_default();
        if verb == "test" {
            if work.pointer(path) != Some(&op["value"]) {
                return Err(format!("test operation at {path} failed"));
            }
            continue;
        }
        let mut parent = &mut work;
        for t in parents {
            parent = match parent {
                Value::Object(m) => {
                    if verb == "add" && !m.contains_key(t) {
                        m.insert(t.clone(), json!({}));
                    }
                    m.get_mut(t).ok_or_else(|| format!("no {path}"))?
                }
                Value::Array(a) => t
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| a.get_mut(i))
                    .ok_or_else(|| format!("no {path}"))?,
                _ => return Err(format!("no {path}")),
            };
        }
        match (verb, parent) {
            ("add" | "replace", Value::Object(m)) => {
                if verb == "replace" && !m.contains_key(last) {
                    return Err(format!("cannot replace missing {path}"));
                }
                m.insert(last.clone(), op["value"].clone());
            }
            ("add", Value::Array(a)) => {
                let at = if last == "-" {
                    a.len()
                } else {
                    last.parse().map_err(|_| format!("bad index in {path}"))?
                };
                if at > a.len() {
                    return Err(format!("index out of range in {path}"));
                }
                a.insert(at, op["value"].clone());
            }
            ("replace", Value::Array(a)) => {
                let slot = last
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| a.get_mut(i))
                    .ok_or_else(|| format!("no {path}"))?;
                *slot = op["value"].clone();
            }
            ("remove", Value::Object(m)) => {
                m.remove(last)
                    .ok_or_else(|| format!("cannot remove missing {path}"))?;
            }
            ("remove", Value::Array(a)) => {
                let i = last
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i < a.len())
                    .ok_or_else(|| format!("no {path}"))?;
                a.remove(i);
            }
            (other, _) => {
                return Err(format!(
                    "unsupported JSON patch operation {other:?} at {path}"
                ));
            }
        }
    }
    *target = work;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_replaces_adds_and_removes() {
        let mut target = json!({"a": {"b": 1, "c": 2}, "d": 3});
        merge_patch(&mut target, &json!({"a": {"b": 5, "c": null}, "e": "x"}));
        assert_eq!(target, json!({"a": {"b": 5}, "d": 3, "e": "x"}));
    }

    #[test]
    fn json_patch_applies_all_or_nothing() {
        let mut target = json!({"spec": {"replicas": 3, "list": [1, 2]}, "metadata": {}});
        let ops = json!([
            {"op": "replace", "path": "/spec/replicas", "value": 5},
            {"op": "add", "path": "/metadata/annotations/a~1b", "value": "x"},
            {"op": "add", "path": "/spec/list/-", "value": 3},
            {"op": "remove", "path": "/spec/list/0"}
        ]);
        json_patch(&mut target, ops.as_array().expect("ops")).expect("applies");
        assert_eq!(target["spec"]["replicas"], 5);
        assert_eq!(target["metadata"]["annotations"]["a/b"], "x");
        assert_eq!(target["spec"]["list"], json!([2, 3]));
        let before = target.clone();
        let bad = json!([{"op": "replace", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/missing", "value": 1}]);
        assert!(json_patch(&mut target, bad.as_array().expect("ops")).is_err());
        assert_eq!(target, before);
    }
}
