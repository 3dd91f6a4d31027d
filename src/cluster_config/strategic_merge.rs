//! Strategic merge of config patches, as upstream merges them (pkg/machinery/config/merge/
//! merge.go, configpatcher/strategic.go, and the `Merge` methods and `merge:"replace"` tags of
//! types/v1alpha1 at v1.11.3): maps merge key by key, lists append, a few lists merge by a key
//! or are replaced, and `$patch: delete` removes what it names.
use super::tree::ConfigNode;

const PATCH_DIRECTIVE: &str = "$patch";

/// Lists whose items merge by a key field (upstream `NetworkDeviceList`, `VlanList`,
/// `AdmissionPluginConfigList`), by their path with list items as `[]`.
const KEYED_LISTS: &[(&str, &[&str])] = &[
    (
        "machine.network.interfaces",
        &["interface", "deviceSelector"],
    ),
    ("machine.network.interfaces[].vlans", &["vlanId"]),
    ("cluster.apiServer.admissionControl", &["name"]),
];

/// Fields upstream tags `merge:"replace"`: the patch's value replaces the config's.
const REPLACED: &[&str] = &[
    "cluster.apiServer.auditPolicy",
    "cluster.network.podSubnets",
    "cluster.network.serviceSubnets",
];

/// Merges the patch documents into the config's: a document with the same identity
/// (`apiVersion/kind/name`; the v1alpha1 document has none) is merged or, with
/// `$patch: delete` at its top, removed; any other is appended.
pub fn merge_documents(config: &mut Vec<ConfigNode>, patch: &[ConfigNode]) -> Result<(), String> {
    for patch_doc in patch {
        let id = document_id(patch_doc);
        let existing = config.iter().position(|d| document_id(d) == id);
        match existing {
            Some(at) if is_delete(patch_doc) => {
                config.remove(at);
            }
            Some(at) => merge_node(&mut config[at], patch_doc, "")?,
            None if is_delete(patch_doc) => {
                return Err(format!("the {id} document to delete is not in the config"));
            }
            None => config.push(patch_doc.clone()),
        }
    }
    Ok(())
}

fn document_id(doc: &ConfigNode) -> String {
    let field = |k: &str| doc.get(k).and_then(ConfigNode::as_str).unwrap_or("");
    if doc.get("machine").is_some() || doc.get("cluster").is_some() || doc.get("version").is_some()
    {
        return "v1alpha1".into();
    }
    format!(
        "{}/{}/{}",
        field("apiVersion"),
        field("kind"),
        field("name")
    )
}

fn is_delete(node: &ConfigNode) -> bool {
    node.get(PATCH_DIRECTIVE).and_then(ConfigNode::as_str) == Some("delete")
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Merges `right` into `left` at `path` (dotted, `[]` for list items).
fn merge_node(left: &mut ConfigNode, right: &ConfigNode, path: &str) -> Result<(), String> {
    match (&mut *left, right) {
        (ConfigNode::Map(_), ConfigNode::Map(entries)) => {
            for (key, value) in entries {
                if key == PATCH_DIRECTIVE {
                    continue;
                }
                let at = child_path(path, key);
                if is_delete(value) {
                    if left.remove(key).is_none() {
                        return Err(format!("{at} to delete is not in the config"));
                    }
                    continue;
                }
                match left.get_mut(key) {
                    Some(existing) if *existing != ConfigNode::Null => {
                        if REPLACED.contains(&at.as_str()) {
                            *existing = value.clone();
                        } else {
                            merge_node(existing, value, &at)?;
                        }
                    }
                    _ => left.set(key, value.clone()),
                }
            }
            Ok(())
        }
        (ConfigNode::Seq(items), ConfigNode::Seq(more)) => {
            match KEYED_LISTS.iter().find(|(p, _)| *p == path) {
                Some((_, keys)) => merge_keyed(items, more, keys, path),
                None => {
                    items.extend(more.iter().cloned());
                    Ok(())
                }
            }
        }
        (_, ConfigNode::Null) => Ok(()),
        // Upstream skips zero values (an empty string, 0) except booleans.
        (_, ConfigNode::Str(s)) if s.is_empty() => Ok(()),
        (_, ConfigNode::Int(0)) => Ok(()),
        // A YAML 1.1 spelling (`yes`, `off`) patched over a boolean is one: upstream decodes the
        // patch into the typed config, where go-yaml v3 reads those spellings into bool fields
        // (configpatcher/load.go, gopkg.in/yaml.v3 decode.go).
        (ConfigNode::Bool(b), ConfigNode::Str(s)) if ConfigNode::yaml11_bool(s).is_some() => {
            *b = ConfigNode::yaml11_bool(s).unwrap_or(*b);
            Ok(())
        }
        (l, r) if same_kind(l, r) => {
            *l = r.clone();
            Ok(())
        }
        _ => Err(format!(
            "{path}: the patch's value is of another type than the config's"
        )),
    }
}

fn same_kind(a: &ConfigNode, b: &ConfigNode) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        || matches!(
            (a, b),
            (ConfigNode::Int(_), ConfigNode::Float(_)) | (ConfigNode::Float(_), ConfigNode::Int(_))
        )
}

/// Items of `more` merge into the item of `items` with the same key (the first key field the
/// patch item sets), are deleted by `$patch: delete`, or are appended.
fn merge_keyed(
    items: &mut Vec<ConfigNode>,
    more: &[ConfigNode],
    keys: &[&str],
    path: &str,
) -> Result<(), String> {
    let item_path = format!("{path}[]");
    for item in more {
        let key = keys.iter().find_map(|k| {
            item.get(k)
                .filter(|v| **v != ConfigNode::Null)
                .map(|v| (*k, v))
        });
        let existing = key.and_then(|(k, v)| items.iter().position(|i| i.get(k) == Some(v)));
        match (existing, is_delete(item)) {
            (Some(at), true) => {
                items.remove(at);
            }
            (None, true) => {
                return Err(format!("{path}: the item to delete is not in the config"));
            }
            (Some(at), false) => merge_node(&mut items[at], item, &item_path)?,
            (None, false) => items.push(item.clone()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> ConfigNode {
        ConfigNode::parse_talos_documents(text).unwrap().remove(0)
    }

    fn merged(config: &str, patch: &str) -> Result<ConfigNode, String> {
        let mut docs = vec![yaml(config)];
        merge_documents(&mut docs, &[yaml(patch)])?;
        Ok(docs.remove(0))
    }

    #[test]
    fn maps_merge_and_lists_append() {
        let out = merged(
            "machine:\n  certSANs: [a]\n  install:\n    disk: /dev/sda\n    wipe: true\n",
            "machine:\n  certSANs: [b]\n  install:\n    disk: /dev/vda\n    wipe: false\n",
        )
        .unwrap();
        assert_eq!(out.at("machine.certSANs"), Some(&yaml("[a, b]")));
        assert_eq!(out.at("machine.install.disk"), Some(&yaml("/dev/vda")));
        assert_eq!(
            out.at("machine.install.wipe"),
            Some(&ConfigNode::Bool(false))
        );
    }

    #[test]
    fn text_enums_stay_text_and_yaml11_spellings_fill_booleans() {
        let out = merged(
            "machine:\n  kubelet:\n    registerWithFQDN: false\nauto: stable\n",
            "machine:\n  kubelet:\n    registerWithFQDN: yes\nauto: off\n",
        )
        .unwrap();
        assert_eq!(
            out.at("machine.kubelet.registerWithFQDN"),
            Some(&ConfigNode::Bool(true))
        );
        assert_eq!(out.get("auto"), Some(&ConfigNode::str("off")));
        let err = merged(
            "machine:\n  kubelet:\n    registerWithFQDN: false\n",
            "machine:\n  kubelet:\n    registerWithFQDN: maybe\n",
        )
        .unwrap_err();
        assert!(err.contains("another type"), "{err}");
    }

    #[test]
    fn replaced_fields_are_replaced() {
        let out = merged(
            "cluster:\n  network:\n    podSubnets: [10.244.0.0/16]\n",
            "cluster:\n  network:\n    podSubnets: [10.0.0.0/8]\n",
        )
        .unwrap();
        assert_eq!(
            out.at("cluster.network.podSubnets"),
            Some(&yaml("[10.0.0.0/8]"))
        );
    }

    #[test]
    fn interfaces_merge_by_name() {
        let out = merged(
            "machine:\n  network:\n    interfaces:\n      - interface: eth0\n        mtu: 1500\n",
            "machine:\n  network:\n    interfaces:\n      - interface: eth0\n        dhcp: true\n      - interface: eth1\n",
        )
        .unwrap();
        let list = out.at("machine.network.interfaces").unwrap();
        let ConfigNode::Seq(items) = list else {
            panic!()
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].get("mtu"), Some(&ConfigNode::Int(1500)));
        assert_eq!(items[0].get("dhcp"), Some(&ConfigNode::Bool(true)));
    }

    #[test]
    fn patch_delete_removes_keys_items_and_documents() {
        let out = merged(
            "machine:\n  network:\n    hostname: a\n  install:\n    disk: /dev/sda\n",
            "machine:\n  network:\n    $patch: delete\n",
        )
        .unwrap();
        assert!(out.at("machine.network").is_none());
        assert!(out.at("machine.install.disk").is_some());

        let out = merged(
            "machine:\n  network:\n    interfaces:\n      - interface: eth0\n      - interface: eth1\n",
            "machine:\n  network:\n    interfaces:\n      - interface: eth0\n        $patch: delete\n",
        )
        .unwrap();
        assert_eq!(
            out.at("machine.network.interfaces"),
            Some(&yaml("[{interface: eth1}]"))
        );

        let mut docs = vec![
            yaml("machine: {type: worker}"),
            yaml("apiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n"),
        ];
        merge_documents(
            &mut docs,
            &[yaml(
                "apiVersion: v1alpha1\nkind: HostnameConfig\n$patch: delete\n",
            )],
        )
        .unwrap();
        assert_eq!(docs.len(), 1);
    }

    #[test]
    fn deleting_what_is_not_there_is_an_error_naming_it() {
        let err = merged(
            "machine: {}\n",
            "machine:\n  network:\n    $patch: delete\n",
        )
        .unwrap_err();
        assert!(err.contains("machine.network"), "{err}");
    }

    #[test]
    fn new_documents_are_appended_and_type_clashes_refused() {
        let mut docs = vec![yaml("machine: {type: worker}")];
        merge_documents(
            &mut docs,
            &[yaml(
                "apiVersion: v1alpha1\nkind: KubeSpanConfig\nenabled: true\n",
            )],
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        let err = merged("machine: {certSANs: []}\n", "machine: {certSANs: x}\n").unwrap_err();
        assert!(err.contains("machine.certSANs"), "{err}");
    }
}
