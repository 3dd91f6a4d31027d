//! An ordered YAML document tree: what generated machine configs are built as, what config
//! patches edit, and what the talosconfig merge rewrites. Map keys keep their order, so a
//! written file reads in the order upstream writes it (serde_json's maps would sort them).
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// One YAML node. Maps keep insertion order; keys are strings (machine configs,
/// talosconfigs and kubeconfigs use no other keys).
#[derive(Clone, PartialEq)]
pub enum ConfigNode {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<ConfigNode>),
    Map(Vec<(String, ConfigNode)>),
}

/// Debug shows the shape only: these trees hold keys and tokens.
impl fmt::Debug for ConfigNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigNode::Map(entries) => f
                .debug_set()
                .entries(entries.iter().map(|(k, _)| k))
                .finish(),
            ConfigNode::Seq(items) => write!(f, "[{} items]", items.len()),
            _ => f.write_str("<scalar>"),
        }
    }
}

impl ConfigNode {
    /// An empty map.
    pub fn map() -> ConfigNode {
        ConfigNode::Map(Vec::new())
    }

    pub fn str(text: impl Into<String>) -> ConfigNode {
        ConfigNode::Str(text.into())
    }

    /// A list of strings.
    pub fn strings<S: AsRef<str>>(items: &[S]) -> ConfigNode {
        ConfigNode::Seq(items.iter().map(|s| ConfigNode::str(s.as_ref())).collect())
    }

    /// Adds or replaces `key` (keeping its place when replaced); builder style.
    pub fn with(mut self, key: &str, value: ConfigNode) -> ConfigNode {
        self.set(key, value);
        self
    }

    /// Adds `key` only when `value` is `Some`; builder style.
    pub fn with_some(self, key: &str, value: Option<ConfigNode>) -> ConfigNode {
        match value {
            Some(v) => self.with(key, v),
            None => self,
        }
    }

    /// Sets `key` of a map (no-op on other nodes), keeping the key's place when it exists.
    pub fn set(&mut self, key: &str, value: ConfigNode) {
        if let ConfigNode::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, slot)) => *slot = value,
                None => entries.push((key.to_string(), value)),
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&ConfigNode> {
        match self {
            ConfigNode::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut ConfigNode> {
        match self {
            ConfigNode::Map(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes `key` of a map, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<ConfigNode> {
        match self {
            ConfigNode::Map(entries) => {
                let at = entries.iter().position(|(k, _)| k == key)?;
                Some(entries.remove(at).1)
            }
            _ => None,
        }
    }

    /// The node at a dotted path of map keys (`cluster.controlPlane.endpoint`).
    pub fn at(&self, dotted: &str) -> Option<&ConfigNode> {
        dotted.split('.').try_fold(self, |node, key| node.get(key))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ConfigNode::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Every map-key path below this node, dotted; list items add `[]`
    /// (`cluster.apiServer.admissionControl[].name`); a key with dots is quoted.
    pub fn key_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_paths(self, "", &mut out);
        out
    }

    /// Reads the YAML documents of a machine config or a config patch with Talos's scalar
    /// rules: Talos decodes with go-yaml v3 (YAML 1.2 core schema), so `on`/`off`/`yes`/`no`
    /// are text and only `true`/`false` are booleans, while a leading-zero integer (`0644`)
    /// is still octal as go-yaml v3 keeps it (gopkg.in/yaml.v3 resolve.go).
    pub fn parse_talos_documents(text: &str) -> Result<Vec<ConfigNode>, serde_saphyr::Error> {
        let mut options = serde_saphyr::Options::default();
        options.strict_booleans = true;
        options.legacy_octal_numbers = true;
        serde_saphyr::from_multiple_with_options(text, options)
    }

    /// Whether `text` is a YAML 1.1 boolean spelling (`yes`, `On`, `off`...): go-yaml v3 reads
    /// such text as a boolean only into a field typed bool (gopkg.in/yaml.v3 decode.go).
    pub fn yaml11_bool(text: &str) -> Option<bool> {
        const TRUE: &[&str] = &["y", "yes", "on", "true"];
        const FALSE: &[&str] = &["n", "no", "off", "false"];
        let spelled = |words: &[&str]| {
            words
                .iter()
                .any(|w| text == *w || text == w.to_uppercase() || text == capitalized(w).as_str())
        };
        if spelled(TRUE) {
            Some(true)
        } else if spelled(FALSE) {
            Some(false)
        } else {
            None
        }
    }

    /// The YAML text of this node (one document, no `---`).
    pub fn to_yaml(&self) -> Result<String, serde_saphyr::ser_error::Error> {
        serde_saphyr::to_string(self)
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn collect_paths(node: &ConfigNode, prefix: &str, out: &mut Vec<String>) {
    match node {
        ConfigNode::Map(entries) => {
            for (key, value) in entries {
                // A key holding dots (a label name) is quoted so the path stays readable.
                let key = if key.contains('.') {
                    format!("{key:?}")
                } else {
                    key.clone()
                };
                let path = if prefix.is_empty() {
                    key
                } else {
                    format!("{prefix}.{key}")
                };
                out.push(path.clone());
                collect_paths(value, &path, out);
            }
        }
        ConfigNode::Seq(items) => {
            let path = format!("{prefix}[]");
            for item in items {
                collect_paths(item, &path, out);
            }
        }
        _ => {}
    }
}

impl Serialize for ConfigNode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ConfigNode::Null => s.serialize_unit(),
            ConfigNode::Bool(b) => s.serialize_bool(*b),
            ConfigNode::Int(i) => s.serialize_i64(*i),
            ConfigNode::Float(x) => s.serialize_f64(*x),
            ConfigNode::Str(text) => s.serialize_str(text),
            ConfigNode::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            ConfigNode::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ConfigNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = ConfigNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<ConfigNode, D::Error> {
        ConfigNode::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Int(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<ConfigNode, E> {
        Ok(i64::try_from(u).map_or(ConfigNode::Float(u as f64), ConfigNode::Int))
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Float(x))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Str(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<ConfigNode, E> {
        Ok(ConfigNode::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConfigNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(ConfigNode::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConfigNode, A::Error> {
        let mut entries: Vec<(String, ConfigNode)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<KeyText, ConfigNode>()? {
            if entries.iter().any(|(k, _)| *k == key.0) {
                return Err(de::Error::custom(format!("key {:?} appears twice", key.0)));
            }
            entries.push((key.0, value));
        }
        Ok(ConfigNode::Map(entries))
    }
}

/// A map key as text: YAML allows `1: x` or `true: x`; these files name things by strings.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let node = ConfigNode::deserialize(d)?;
        match node {
            ConfigNode::Str(s) => Ok(KeyText(s)),
            ConfigNode::Int(i) => Ok(KeyText(i.to_string())),
            ConfigNode::Bool(b) => Ok(KeyText(b.to_string())),
            _ => Err(de::Error::custom("a map key must be a string")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_through_yaml() {
        let text = "zeta: 1\nalpha:\n  b: [x, y]\n  a: true\n";
        let node: ConfigNode = serde_saphyr::from_str(text).unwrap();
        assert_eq!(
            node.key_paths(),
            ["zeta", "alpha", "alpha.b", "alpha.a"].map(String::from)
        );
        let back: ConfigNode = serde_saphyr::from_str(&node.to_yaml().unwrap()).unwrap();
        assert_eq!(back, node);
    }

    #[test]
    fn set_keeps_place_and_at_walks_dots() {
        let mut node = ConfigNode::map()
            .with("a", ConfigNode::Int(1))
            .with("b", ConfigNode::map().with("c", ConfigNode::str("x")));
        node.set("a", ConfigNode::Int(2));
        assert_eq!(node.key_paths()[0], "a");
        assert_eq!(node.at("b.c").and_then(ConfigNode::as_str), Some("x"));
        assert!(node.at("b.d").is_none());
    }

    #[test]
    fn debug_never_shows_values() {
        let node = ConfigNode::map().with("token", ConfigNode::str("s3cr3t"));
        assert!(!format!("{node:?}").contains("s3cr3t"));
    }

    #[test]
    fn talos_documents_follow_yaml_1_2_core_with_octal() {
        let docs = ConfigNode::parse_talos_documents(
            "auto: off\nenabled: true\nlegacy: yes\nmode: 0644\nnew: 0o17\nn: 12\n---\nx: On\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].get("auto"), Some(&ConfigNode::str("off")));
        assert_eq!(docs[0].get("enabled"), Some(&ConfigNode::Bool(true)));
        assert_eq!(docs[0].get("legacy"), Some(&ConfigNode::str("yes")));
        assert_eq!(docs[0].get("mode"), Some(&ConfigNode::Int(0o644)));
        assert_eq!(docs[0].get("new"), Some(&ConfigNode::Int(0o17)));
        assert_eq!(docs[0].get("n"), Some(&ConfigNode::Int(12)));
        assert_eq!(docs[1].get("x"), Some(&ConfigNode::str("On")));
    }

    #[test]
    fn yaml11_bool_spellings() {
        for yes in ["yes", "Yes", "YES", "on", "ON", "y", "true"] {
            assert_eq!(ConfigNode::yaml11_bool(yes), Some(true), "{yes}");
        }
        for no in ["no", "No", "off", "OFF", "n", "False"] {
            assert_eq!(ConfigNode::yaml11_bool(no), Some(false), "{no}");
        }
        for neither in ["oFF", "stable", "", "yess"] {
            assert_eq!(ConfigNode::yaml11_bool(neither), None, "{neither}");
        }
    }

    #[test]
    fn text_that_reads_as_a_bool_is_written_quoted() {
        let node = ConfigNode::map().with("auto", ConfigNode::str("off"));
        let text = node.to_yaml().unwrap();
        assert!(!text.contains("auto: off"), "{text}");
        let back = ConfigNode::parse_talos_documents(&text).unwrap();
        assert_eq!(back[0], node);
    }

    #[test]
    fn duplicate_keys_are_refused() {
        assert!(serde_saphyr::from_str::<ConfigNode>("a: 1\na: 2\n").is_err());
    }
}
