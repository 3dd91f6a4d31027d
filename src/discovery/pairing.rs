//! Pairing talos and kube contexts into clusters. Rules, in order: the explicit
//! mapping in taloscope's config; names (kube cluster name = talos context, or
//! `admin@<talos context>`, those whose server is among the talos endpoints first);
//! addresses (kube server host among talos endpoints/nodes).
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::path::Path;

use super::{Cluster, DiscoveryError, KubeContext, PairedBy, TalosContext};
use crate::config::Config;

/// Clusters sorted by name, and the problems met in the config's mapping.
#[derive(Debug, Default)]
pub(crate) struct Paired {
    pub clusters: Vec<Cluster>,
    pub errors: Vec<DiscoveryError>,
}

/// Pairs every context at most once; whatever stays unpaired is a cluster of
/// its own. Within a rule, talos contexts are taken in name order and each
/// takes the first matching kube context in name order.
pub(crate) fn pair(
    talos: Vec<TalosContext>,
    kube: Vec<KubeContext>,
    config: &Config,
    config_file: Option<&Path>,
) -> Paired {
    let mut talos: Vec<Option<TalosContext>> = sorted_by_name(talos, |t| &t.name);
    let mut kube: Vec<Option<KubeContext>> = sorted_by_name(kube, |k| &k.name);
    let mut paired = Paired::default();
    let mut names = ClusterNames::default();
    let config_file = config_file.unwrap_or(Path::new("taloscope config"));

    // Which config cluster took each context, to explain a second claim.
    let mut claimed_by: HashMap<(&str, String), &str> = HashMap::new();
    for (cluster_name, entry) in &config.clusters {
        let mut claim = |kind: &'static str, wanted: &Option<String>, found: Option<usize>| {
            let wanted = wanted.as_deref()?;
            if found.is_some() {
                claimed_by.insert((kind, wanted.to_owned()), cluster_name);
                return found;
            }
            let why = match claimed_by.get(&(kind, wanted.to_owned())) {
                Some(first) => format!("which cluster {first:?} already uses"),
                None => "which is not defined (or did not load)".to_owned(),
            };
            paired.errors.push(DiscoveryError::new(
                config_file,
                Some(wanted),
                format!("cluster {cluster_name:?} names {kind} context {wanted:?}, {why}"),
            ));
            None
        };
        let t = claim(
            "talos",
            &entry.talos_context,
            position(&talos, |t| Some(&t.name) == entry.talos_context.as_ref()),
        );
        let k = claim(
            "kube",
            &entry.kube_context,
            position(&kube, |k| Some(&k.name) == entry.kube_context.as_ref()),
        );
        let t = t.and_then(|i| talos[i].take());
        let k = k.and_then(|i| kube[i].take());
        if t.is_none() && k.is_none() {
            continue;
        }
        let paired_by = (t.is_some() && k.is_some()).then_some(PairedBy::Config);
        paired.clusters.push(Cluster {
            name: names.claim(cluster_name, "config"),
            talos: t,
            kube: k,
            paired_by,
            ..Default::default()
        });
    }

    let rules: [(PairedBy, MatchRule); 2] = [
        (PairedBy::Name, matches_by_name),
        (PairedBy::Address, matches_by_address),
    ];
    for (paired_by, matches) in rules {
        for t_slot in talos.iter_mut() {
            let Some(t) = t_slot.as_ref() else { continue };
            // Of the kube contexts a name matches, one whose API server is among the talos
            // endpoints comes first: an older `admin@<name>` of another cluster never wins
            // over the context a create wrote for this one.
            let Some(k_index) = position(&kube, |k| matches(t, k) && matches_by_address(t, k))
                .or_else(|| position(&kube, |k| matches(t, k)))
            else {
                continue;
            };
            // Both slots were just seen full; the `else` cannot happen.
            let (Some(t), Some(k)) = (t_slot.take(), kube[k_index].take()) else {
                continue;
            };
            paired.clusters.push(Cluster {
                name: names.claim(&t.name, "talos"),
                talos: Some(t),
                kube: Some(k),
                paired_by: Some(paired_by),
                ..Default::default()
            });
        }
    }

    for t in talos.into_iter().flatten() {
        paired.clusters.push(Cluster {
            name: names.claim(&t.name, "talos"),
            talos: Some(t),
            kube: None,
            paired_by: None,
            ..Default::default()
        });
    }
    for k in kube.into_iter().flatten() {
        paired.clusters.push(Cluster {
            name: names.claim(&k.name, "kube"),
            talos: None,
            kube: Some(k),
            paired_by: None,
            ..Default::default()
        });
    }
    paired.clusters.sort_by(|a, b| a.name.cmp(&b.name));
    paired
}

type MatchRule = fn(&TalosContext, &KubeContext) -> bool;

/// What Talos writes: kube cluster named like the talos context, or the kube
/// context named `admin@<talos context>`.
fn matches_by_name(t: &TalosContext, k: &KubeContext) -> bool {
    k.cluster == t.name || k.name.strip_prefix("admin@") == Some(t.name.as_str())
}

/// The kube API server runs on one of the talos endpoints or nodes.
fn matches_by_address(t: &TalosContext, k: &KubeContext) -> bool {
    let Some(server) = k.server.as_deref().and_then(host_of) else {
        return false;
    };
    t.endpoints
        .iter()
        .chain(&t.nodes)
        .filter_map(|a| host_of(a))
        .any(|h| h == server)
}

/// The host part of a URL, `host:port` or bare address, lower-cased; IP
/// addresses in canonical form so `::1` and `0:0::1` compare equal.
pub fn host_of(address: &str) -> Option<String> {
    let address = address.trim();
    let rest = address.split_once("://").map_or(address, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split_once(']')?.0
    } else if authority.matches(':').count() == 1 {
        authority.split_once(':').map_or(authority, |(h, _)| h)
    } else {
        // No port, or a bare IPv6 address.
        authority
    };
    if host.is_empty() {
        return None;
    }
    Some(match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    })
}

fn sorted_by_name<T>(mut items: Vec<T>, name: impl Fn(&T) -> &String) -> Vec<Option<T>> {
    items.sort_by(|a, b| name(a).cmp(name(b)));
    items.into_iter().map(Some).collect()
}

fn position<T>(slots: &[Option<T>], matches: impl Fn(&T) -> bool) -> Option<usize> {
    slots.iter().position(|s| s.as_ref().is_some_and(&matches))
}

/// Cluster names already given out. A clash (a kube-only context named like a
/// talos context, say) gets the kind appended rather than two equal names.
#[derive(Default)]
struct ClusterNames(HashSet<String>);

impl ClusterNames {
    fn claim(&mut self, wanted: &str, kind: &str) -> String {
        let mut name = wanted.to_owned();
        let mut n = 1;
        while self.0.contains(&name) {
            name = match n {
                1 => format!("{wanted} ({kind})"),
                _ => format!("{wanted} ({kind} {n})"),
            };
            n += 1;
        }
        self.0.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::config::ClusterConfig;

    fn talos(name: &str, endpoints: &[&str], nodes: &[&str]) -> TalosContext {
        TalosContext {
            name: name.into(),
            file: PathBuf::from("talosconfig"),
            endpoints: endpoints.iter().map(|s| s.to_string()).collect(),
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
            ca_pem: String::new(),
            crt_pem: String::new(),
            key_pem: String::new(),
        }
    }

    fn kube(name: &str, cluster: &str, server: Option<&str>) -> KubeContext {
        KubeContext {
            name: name.into(),
            file: PathBuf::from("kubeconfig"),
            cluster: cluster.into(),
            user: "admin".into(),
            server: server.map(str::to_owned),
        }
    }

    fn config(entries: &[(&str, Option<&str>, Option<&str>)]) -> Config {
        Config {
            clusters: entries
                .iter()
                .map(|(name, t, k)| {
                    let entry = ClusterConfig {
                        talos_context: t.map(str::to_owned),
                        kube_context: k.map(str::to_owned),
                        ..ClusterConfig::default()
                    };
                    (name.to_string(), entry)
                })
                .collect::<BTreeMap<_, _>>(),
            ..Config::default()
        }
    }

    /// (cluster name, talos context, kube context, paired by)
    type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<PairedBy>);

    fn summary(paired: &Paired) -> Vec<Row<'_>> {
        paired
            .clusters
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.talos_context(),
                    c.kube_context(),
                    c.paired_by,
                )
            })
            .collect()
    }

    #[test]
    fn every_rule_and_the_leftovers() {
        let paired = pair(
            vec![
                talos("alpha", &["127.0.0.11"], &[]),
                talos("bravo", &["127.0.0.21"], &[]),
                talos("charlie", &["127.0.0.31:50000"], &["127.0.0.32"]),
                talos("delta", &["127.0.0.41"], &[]),
                talos("echo", &["127.0.0.51"], &[]),
            ],
            vec![
                kube(
                    "admin@alpha",
                    "alpha-cluster",
                    Some("https://127.0.0.111:6443"),
                ),
                kube("ops-bravo", "bravo", Some("https://127.0.0.21:6443")),
                kube("lab", "lab-cluster", Some("https://127.0.0.32:6443")),
                kube("prod-k8s", "prod", Some("https://127.0.0.51:6443")),
                kube("kube-only", "solo", Some("https://127.0.0.99:6443")),
            ],
            &config(&[("production", Some("echo"), Some("prod-k8s"))]),
            Some(Path::new("taloscope.yaml")),
        );
        assert!(paired.errors.is_empty(), "{:?}", paired.errors);
        assert_eq!(
            summary(&paired),
            [
                (
                    "alpha",
                    Some("alpha"),
                    Some("admin@alpha"),
                    Some(PairedBy::Name)
                ),
                (
                    "bravo",
                    Some("bravo"),
                    Some("ops-bravo"),
                    Some(PairedBy::Name)
                ),
                (
                    "charlie",
                    Some("charlie"),
                    Some("lab"),
                    Some(PairedBy::Address)
                ),
                ("delta", Some("delta"), None, None),
                ("kube-only", None, Some("kube-only"), None),
                (
                    "production",
                    Some("echo"),
                    Some("prod-k8s"),
                    Some(PairedBy::Config)
                ),
            ]
        );
    }

    #[test]
    fn config_wins_over_name_and_name_over_address() {
        // kube `admin@a` would pair with `a` by name, but the config gives it to `b`.
        // `a` then pairs by address with `k2`, whose cluster name also matches `b`
        // (already taken by the config).
        let paired = pair(
            vec![
                talos("a", &["127.0.0.1"], &[]),
                talos("b", &["127.0.0.2"], &[]),
            ],
            vec![
                kube("admin@a", "x", Some("https://127.0.0.2:6443")),
                kube("k2", "b", Some("https://127.0.0.1:6443")),
            ],
            &config(&[("mine", Some("b"), Some("admin@a"))]),
            Some(Path::new("taloscope.yaml")),
        );
        assert_eq!(
            summary(&paired),
            [
                ("a", Some("a"), Some("k2"), Some(PairedBy::Address)),
                ("mine", Some("b"), Some("admin@a"), Some(PairedBy::Config)),
            ]
        );
    }

    #[test]
    fn a_kube_context_pairs_once_and_the_order_is_by_name() {
        // Both talos contexts list 127.0.0.1; `a` comes first and takes the
        // kube context, `b` stays Talos-only.
        let paired = pair(
            vec![
                talos("b", &["127.0.0.1"], &[]),
                talos("a", &["127.0.0.1"], &[]),
            ],
            vec![kube("k", "k", Some("https://127.0.0.1:6443"))],
            &Config::default(),
            None,
        );
        assert_eq!(
            summary(&paired),
            [
                ("a", Some("a"), Some("k"), Some(PairedBy::Address)),
                ("b", Some("b"), None, None),
            ]
        );
    }

    /// The operator's older `admin@lab7` (cluster corp-lab) sorts ahead of the context a
    /// create of lab7 wrote (`admin@lab7-1`, cluster lab7); the one whose server is among
    /// lab7's endpoints is lab7's, and the corp context stays a cluster of its own.
    #[test]
    fn a_name_match_on_the_talos_endpoints_wins_over_an_older_context_of_the_name() {
        let paired = pair(
            vec![talos("lab7", &["127.0.0.50"], &["127.0.0.50"])],
            vec![
                kube("admin@lab7", "corp-lab", Some("https://127.0.0.9:6443")),
                kube("admin@lab7-1", "lab7", Some("https://127.0.0.50:6443")),
            ],
            &Config::default(),
            None,
        );
        assert_eq!(
            summary(&paired),
            [
                ("admin@lab7", None, Some("admin@lab7"), None),
                (
                    "lab7",
                    Some("lab7"),
                    Some("admin@lab7-1"),
                    Some(PairedBy::Name)
                ),
            ]
        );
    }

    #[test]
    fn config_naming_a_missing_context_is_an_error_naming_the_config_file() {
        let paired = pair(
            vec![talos("t", &[], &[])],
            vec![],
            &config(&[
                ("prod", Some("t"), Some("gone")),
                ("none", Some("nope"), None),
            ]),
            Some(Path::new("/etc/taloscope.yaml")),
        );
        assert_eq!(paired.errors.len(), 2, "{:?}", paired.errors);
        assert!(
            paired
                .errors
                .iter()
                .all(|e| e.file == Path::new("/etc/taloscope.yaml"))
        );
        assert_eq!(paired.errors[0].context.as_deref(), Some("nope"));
        assert_eq!(paired.errors[1].context.as_deref(), Some("gone"));
        // The half that exists still becomes the named cluster.
        assert_eq!(summary(&paired), [("prod", Some("t"), None, None)]);
    }

    #[test]
    fn two_config_entries_cannot_claim_the_same_context() {
        let paired = pair(
            vec![talos("t", &[], &[])],
            vec![],
            &config(&[("one", Some("t"), None), ("two", Some("t"), None)]),
            Some(Path::new("taloscope.yaml")),
        );
        assert_eq!(summary(&paired), [("one", Some("t"), None, None)]);
        assert_eq!(paired.errors.len(), 1);
        assert!(paired.errors[0].message.contains("\"two\""));
        assert!(paired.errors[0].message.contains("\"one\" already uses"));
    }

    #[test]
    fn clashing_names_are_kept_apart() {
        let paired = pair(
            vec![talos("dev", &["127.0.0.1"], &[])],
            vec![kube("dev", "other", Some("https://127.0.0.9:6443"))],
            &Config::default(),
            None,
        );
        assert_eq!(
            summary(&paired),
            [
                ("dev", Some("dev"), None, None),
                ("dev (kube)", None, Some("dev"), None),
            ]
        );
    }

    #[test]
    fn kube_context_without_server_pairs_only_by_name() {
        let paired = pair(
            vec![talos("t", &["127.0.0.1"], &[])],
            vec![kube("x", "missing", None)],
            &Config::default(),
            None,
        );
        assert_eq!(paired.clusters.len(), 2);
        assert!(paired.clusters.iter().all(|c| c.paired_by.is_none()));
    }

    #[test]
    fn hosts_compare_without_ports_or_schemes() {
        for (address, host) in [
            ("https://127.0.0.1:6443", "127.0.0.1"),
            ("https://127.0.0.1:6443/path?x", "127.0.0.1"),
            ("127.0.0.1:50000", "127.0.0.1"),
            ("127.0.0.1", "127.0.0.1"),
            ("https://[::1]:6443", "::1"),
            ("[0:0::1]:50000", "::1"),
            ("::1", "::1"),
            ("https://user@Node-1.Example:6443", "node-1.example"),
            (" node-1 ", "node-1"),
        ] {
            assert_eq!(host_of(address).as_deref(), Some(host), "{address}");
        }
        assert_eq!(host_of(""), None);
        assert_eq!(host_of("https://"), None);
        assert_eq!(host_of("[::1"), None);
    }
}
