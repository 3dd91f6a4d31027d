//! What `taloscope contexts` shows: the JSON contract other tools read, and
//! the aligned table for people. Names, addresses and files only; never keys.
use serde::Serialize;

use super::{Cluster, Discovery, DiscoveryError, PairedBy};

/// `{"clusters":[..],"errors":[..]}`: field names and order are a contract.
#[derive(Debug, Serialize)]
pub struct ContextsReport<'a> {
    pub clusters: Vec<ClusterEntry<'a>>,
    pub errors: Vec<ErrorEntry<'a>>,
}

#[derive(Debug, Serialize)]
pub struct ClusterEntry<'a> {
    pub name: &'a str,
    pub talos_context: Option<&'a str>,
    pub kube_context: Option<&'a str>,
    pub endpoints: &'a [String],
    pub nodes: &'a [String],
    pub kube_server: Option<&'a str>,
    /// The other contexts that reach this cluster; `--context` takes any of them.
    pub alternate_contexts: Vec<&'a str>,
}

#[derive(Debug, Serialize)]
pub struct ErrorEntry<'a> {
    pub file: String,
    pub context: Option<&'a str>,
    pub message: &'a str,
}

impl<'a> ContextsReport<'a> {
    pub fn new(discovery: &'a Discovery) -> Self {
        ContextsReport {
            clusters: discovery.clusters.iter().map(ClusterEntry::from).collect(),
            errors: discovery.errors.iter().map(ErrorEntry::from).collect(),
        }
    }

    pub fn to_json(&self) -> String {
        // Only strings, lists and options: serialising cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"))
    }
}

impl<'a> From<&'a Cluster> for ClusterEntry<'a> {
    fn from(cluster: &'a Cluster) -> Self {
        ClusterEntry {
            name: &cluster.name,
            talos_context: cluster.talos_context(),
            kube_context: cluster.kube_context(),
            endpoints: cluster.endpoints(),
            nodes: cluster.nodes(),
            kube_server: cluster.kube_server(),
            alternate_contexts: cluster.alternate_contexts(),
        }
    }
}

impl<'a> From<&'a DiscoveryError> for ErrorEntry<'a> {
    fn from(error: &'a DiscoveryError) -> Self {
        ErrorEntry {
            file: error.file.display().to_string(),
            context: error.context.as_deref(),
            message: &error.message,
        }
    }
}

/// How a cluster came together, in the operator's words; none when its contexts were not
/// paired (the console's discovery list says so too).
pub fn paired_by_word(cluster: &Cluster) -> Option<&'static str> {
    match (cluster.paired_by, &cluster.talos, &cluster.kube) {
        (Some(PairedBy::Config), _, _) => Some("config"),
        (Some(PairedBy::Name), _, _) => Some("name"),
        (Some(PairedBy::Address), _, _) => Some("address"),
        (None, Some(_), None) => Some("talos only"),
        (None, None, Some(_)) => Some("kube only"),
        (None, _, _) => None,
    }
}

/// The table: NAME TALOS KUBE ENDPOINTS PAIRED-BY ALSO (the alternate contexts, which
/// `--context` also takes), then the errors.
pub fn table(discovery: &Discovery) -> String {
    let header = ["NAME", "TALOS", "KUBE", "ENDPOINTS", "PAIRED-BY", "ALSO"].map(String::from);
    let rows: Vec<[String; 6]> = discovery
        .clusters
        .iter()
        .map(|c| {
            let endpoints = c.endpoints().join(",");
            [
                c.name.clone(),
                c.talos_context().unwrap_or("-").to_owned(),
                c.kube_context().unwrap_or("-").to_owned(),
                if endpoints.is_empty() {
                    "-".into()
                } else {
                    endpoints
                },
                paired_by_word(c).unwrap_or("-").to_owned(),
                c.alternate_contexts().join(","),
            ]
        })
        .collect();

    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("No clusters found.\n");
    } else {
        out.push_str(&crate::printable::columns(
            &std::iter::once(header).chain(rows).collect::<Vec<_>>(),
        ));
    }
    if discovery
        .clusters
        .iter()
        .any(|c| !c.alternate_contexts().is_empty())
    {
        out.push_str(
            "\nALSO: other contexts that reach the same cluster; --context NAME uses exactly that one\n",
        );
    }
    if !discovery.errors.is_empty() {
        out.push_str("\nERRORS\n");
        for error in &discovery.errors {
            out.push_str(&format!("  {error}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::discovery::{KubeContext, TalosContext};

    fn discovery() -> Discovery {
        let talos = TalosContext {
            name: "alpha".into(),
            file: PathBuf::from("c.yaml"),
            endpoints: vec!["127.0.0.11".into(), "127.0.0.12".into()],
            nodes: vec!["127.0.0.13".into()],
            ca_pem: "-----BEGIN CERTIFICATE-----".into(),
            crt_pem: "-----BEGIN CERTIFICATE-----".into(),
            key_pem: "-----BEGIN PRIVATE KEY-----secret".into(),
        };
        let kube = KubeContext {
            name: "admin@alpha".into(),
            file: PathBuf::from("a.yaml"),
            cluster: "alpha".into(),
            user: "admin".into(),
            server: Some("https://127.0.0.11:6443".into()),
        };
        Discovery {
            clusters: vec![
                Cluster {
                    name: "alpha".into(),
                    talos: Some(talos.clone()),
                    kube: Some(kube.clone()),
                    paired_by: Some(PairedBy::Name),
                    alternate_talos: vec![TalosContext {
                        name: "alpha-reader".into(),
                        ..talos.clone()
                    }],
                    ..Default::default()
                },
                Cluster {
                    name: "k".into(),
                    talos: None,
                    kube: Some(KubeContext {
                        name: "k".into(),
                        server: None,
                        ..kube
                    }),
                    paired_by: None,
                    ..Default::default()
                },
            ],
            errors: vec![DiscoveryError {
                file: PathBuf::from("broken.yaml"),
                context: None,
                message: "YAML error at line 5, column 3: oops".into(),
            }],
            ..Discovery::default()
        }
    }

    #[test]
    fn json_follows_the_contract() {
        let d = discovery();
        let json: serde_json::Value =
            serde_json::from_str(&ContextsReport::new(&d).to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "clusters": [
                    {"name": "alpha", "talos_context": "alpha", "kube_context": "admin@alpha",
                     "endpoints": ["127.0.0.11", "127.0.0.12"], "nodes": ["127.0.0.13"],
                     "kube_server": "https://127.0.0.11:6443",
                     "alternate_contexts": ["alpha-reader"]},
                    {"name": "k", "talos_context": null, "kube_context": "k",
                     "endpoints": [], "nodes": [], "kube_server": null,
                     "alternate_contexts": []},
                ],
                "errors": [
                    {"file": "broken.yaml", "context": null,
                     "message": "YAML error at line 5, column 3: oops"},
                ],
            })
        );
    }

    #[test]
    fn json_keeps_field_order_and_never_holds_keys() {
        let d = discovery();
        let text = ContextsReport::new(&d).to_json();
        let order = [
            "\"name\"",
            "\"talos_context\"",
            "\"kube_context\"",
            "\"endpoints\"",
            "\"nodes\"",
            "\"kube_server\"",
            "\"alternate_contexts\"",
        ];
        let positions: Vec<usize> = order.iter().map(|k| text.find(k).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(!text.contains("PRIVATE KEY"));
        assert!(!text.contains("CERTIFICATE"));
    }

    #[test]
    fn table_aligns_columns_and_lists_errors() {
        let text = table(&discovery());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "NAME   TALOS  KUBE         ENDPOINTS              PAIRED-BY  ALSO"
        );
        assert_eq!(
            lines[1],
            "alpha  alpha  admin@alpha  127.0.0.11,127.0.0.12  name       alpha-reader"
        );
        assert_eq!(
            lines[2],
            "k      -      k            -                      kube only"
        );
        assert_eq!(lines[3], "");
        assert!(lines[4].starts_with("ALSO: "), "{text}");
        assert_eq!(lines[5], "");
        assert_eq!(lines[6], "ERRORS");
        assert_eq!(
            lines[7],
            "  broken.yaml: YAML error at line 5, column 3: oops"
        );
        assert!(!text.contains("PRIVATE KEY"));
    }

    #[test]
    fn empty_table_says_so() {
        let text = table(&Discovery::default());
        assert_eq!(text, "No clusters found.\n");
    }
}
