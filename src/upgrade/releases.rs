//! Which Talos and Kubernetes releases exist, learned at run time: the tags of the installer
//! image (`ghcr.io/siderolabs/installer`) or of the API server image
//! (`registry.k8s.io/kube-apiserver`) as the cluster's registry mirrors or the registry itself
//! list them, cached in the state dir with their age; the built-in table when none answers.
//! What an upgrade plan records of it: where the knowledge came from.
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::cluster_config::ConfigNode;
use crate::registry::Registry;
use crate::versions::TalosReleases;

/// The registry the installer image lives in, as upstream names it
/// (`ghcr.io/siderolabs/installer:<version>`, siderolabs/talos pkg/images).
pub const INSTALLER_REGISTRY: &str = "ghcr.io";
pub const INSTALLER_REPOSITORY: &str = "siderolabs/installer";
/// Where `ghcr.io` and `registry.k8s.io` are reached instead (a loopback registry in tests, a
/// proxy), or `off` to ask no registry at all.
pub const REGISTRY_ENV: &str = "TALOSCOPE_RELEASES_REGISTRY";
/// What the operator types to plan a Talos version neither the registry nor the table lists.
pub const UNLISTED_RELEASE_ACK: &str = "an unlisted Talos release";

/// A listing younger than this is used without asking again.
const CACHE_FRESH: Duration = Duration::from_secs(3600);

/// An image whose tags name releases, and where its last listing is kept below the state dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseImage {
    pub registry: &'static str,
    pub repository: &'static str,
    cache_file: &'static str,
}

/// Talos: the installer image (siderolabs/talos pkg/images).
pub const TALOS_INSTALLER: ReleaseImage = ReleaseImage {
    registry: INSTALLER_REGISTRY,
    repository: INSTALLER_REPOSITORY,
    cache_file: "releases/talos-installer.json",
};
/// Kubernetes: the API server image talosctl upgrades to (constants.KubernetesAPIServerImage).
pub const KUBE_APISERVER: ReleaseImage = ReleaseImage {
    registry: "registry.k8s.io",
    repository: "kube-apiserver",
    cache_file: "releases/kube-apiserver.json",
};
/// The cap for the cache file.
const CACHE_LIMIT: u64 = 4 * 1024 * 1024;

/// Where a plan's release knowledge came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum ReleasesOrigin {
    /// A registry's listing of `repository`, `age_seconds` old (0 when asked for this plan).
    Registry {
        registry: String,
        #[serde(default = "installer_repository")]
        repository: String,
        age_seconds: u64,
    },
    /// The table compiled into taloscope, and why no registry was used.
    BuiltIn { reason: String },
}

impl Default for ReleasesOrigin {
    fn default() -> Self {
        ReleasesOrigin::BuiltIn {
            reason: "no registry was asked".into(),
        }
    }
}

impl ReleasesOrigin {
    /// One line for the plan: where the releases came from.
    pub fn describe(&self) -> String {
        match self {
            ReleasesOrigin::Registry {
                registry,
                repository,
                age_seconds,
            } => format!(
                "releases listed by registry {} ({}), {}",
                crate::printable::line(registry),
                crate::printable::line(repository),
                age_text(*age_seconds)
            ),
            ReleasesOrigin::BuiltIn { reason } => format!(
                "releases from the built-in table: {}",
                crate::printable::line(reason)
            ),
        }
    }
}

fn installer_repository() -> String {
    INSTALLER_REPOSITORY.to_string()
}

fn age_text(seconds: u64) -> String {
    match seconds {
        0 => "just now".into(),
        s if s < 120 => format!("{s} s ago"),
        s if s < 7200 => format!("{} min ago", s / 60),
        s => format!("{} h ago", s / 3600),
    }
}

/// The releases one decision uses, and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnedReleases {
    pub releases: TalosReleases,
    pub origin: ReleasesOrigin,
}

/// The Talos releases learned for one cluster (its mirrors, the registry, else the built-in
/// table), as `taloscope upgrade` learns them: the console tells them to its upgrade plans
/// (the in-place Talos plan and the CAPI-way one), which choose their targets among them.
#[derive(Debug, Clone)]
pub struct ReleasesLearned {
    pub cluster: String,
    pub learned: LearnedReleases,
}

impl LearnedReleases {
    /// The built-in table, for `reason`.
    pub fn built_in(reason: impl Into<String>) -> LearnedReleases {
        LearnedReleases {
            releases: TalosReleases::built_in(),
            origin: ReleasesOrigin::BuiltIn {
                reason: reason.into(),
            },
        }
    }
}

/// One place the installer's tags may be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryEndpoint {
    pub url: String,
    /// A mirror of `ghcr.io` (from the machine config), not the registry itself.
    pub mirror: bool,
}

/// Where and how to learn the releases.
#[derive(Debug, Clone)]
pub struct ReleaseLookup {
    pub image: ReleaseImage,
    /// Asked in order: the mirrors first, as containerd pulls through them, then the registry.
    pub endpoints: Vec<RegistryEndpoint>,
    /// The state dir the listing is cached in; `None` keeps no cache.
    pub state_dir: Option<PathBuf>,
    pub pre_release: bool,
    pub timeout: Duration,
}

#[derive(Serialize, Deserialize)]
struct CachedListing {
    registry: String,
    fetched_at: u64,
    tags: Vec<String>,
}

impl ReleaseLookup {
    /// The Talos lookup for a cluster whose machine config names `mirrors` for `ghcr.io`;
    /// `registry_setting` is [`REGISTRY_ENV`]'s value: another address for `ghcr.io`, or `off`.
    pub fn new(
        registry_setting: Option<&str>,
        mirrors: Vec<String>,
        state_dir: Option<PathBuf>,
        pre_release: bool,
    ) -> ReleaseLookup {
        ReleaseLookup::of(
            TALOS_INSTALLER,
            registry_setting,
            mirrors,
            state_dir,
            pre_release,
        )
    }

    /// The lookup of `image`'s releases, `mirrors` being the cluster's for its registry.
    pub fn of(
        image: ReleaseImage,
        registry_setting: Option<&str>,
        mirrors: Vec<String>,
        state_dir: Option<PathBuf>,
        pre_release: bool,
    ) -> ReleaseLookup {
        let mut endpoints: Vec<RegistryEndpoint> = mirrors
            .into_iter()
            .map(|url| RegistryEndpoint { url, mirror: true })
            .collect();
        match registry_setting.map(str::trim) {
            Some("off") => {}
            Some(url) if !url.is_empty() => endpoints.push(RegistryEndpoint {
                url: url.to_string(),
                mirror: false,
            }),
            _ => endpoints.push(RegistryEndpoint {
                url: format!("https://{}", image.registry),
                mirror: false,
            }),
        }
        ReleaseLookup {
            image,
            endpoints,
            state_dir,
            pre_release,
            timeout: Duration::from_secs(10),
        }
    }

    /// The lookup of a Talos upgrade of the cluster `cluster` names in taloscope's `config`
    /// (`taloscope upgrade` and the console's plan screen alike): the mirrors of `ghcr.io`
    /// its machine configs name, then the registry as [`REGISTRY_ENV`] sets it, cached in
    /// `state_dir`. Nothing is asked until [`ReleaseLookup::learn`].
    pub fn for_cluster(
        config: &crate::config::Config,
        cluster: Option<&str>,
        state_dir: &Path,
        pre_release: bool,
    ) -> ReleaseLookup {
        let mirrors: Vec<String> = cluster
            .and_then(|name| config.clusters.get(name))
            .map(|entry| {
                [
                    crate::config::MachineRole::Controlplane,
                    crate::config::MachineRole::Worker,
                ]
                .into_iter()
                .filter_map(|role| entry.machine_configs.get(role).cloned())
                .flat_map(|file| installer_mirrors_in(&file))
                .collect()
            })
            .unwrap_or_default();
        let setting = std::env::var(REGISTRY_ENV).ok();
        ReleaseLookup::new(
            setting.as_deref(),
            mirrors,
            Some(state_dir.to_path_buf()),
            pre_release,
        )
    }

    /// The lookup a create uses: no cluster, so no machine config naming mirrors yet; the
    /// registry as [`REGISTRY_ENV`] sets it, cached in `state_dir`; stable releases only.
    pub fn for_new_cluster(state_dir: &Path) -> ReleaseLookup {
        let setting = std::env::var(REGISTRY_ENV).ok();
        ReleaseLookup::new(
            setting.as_deref(),
            Vec::new(),
            Some(state_dir.to_path_buf()),
            false,
        )
    }

    /// A fresh cached listing, else the first endpoint that lists the tags (cached for next
    /// time), else an older cached listing, else the built-in table with the reasons.
    pub async fn learn(&self) -> LearnedReleases {
        match self.listing().await {
            Ok((tags, origin)) => LearnedReleases {
                releases: TalosReleases::from_tags(&tags, self.pre_release),
                origin,
            },
            Err(reasons) => LearnedReleases::built_in(reasons),
        }
    }

    /// The image's tags and where they came from, or why no registry listed them.
    pub async fn listing(&self) -> Result<(Vec<String>, ReleasesOrigin), String> {
        let now = unix_now();
        let cached = self.read_cache();
        if let Some(c) = &cached
            && now.saturating_sub(c.fetched_at) < CACHE_FRESH.as_secs()
        {
            return Ok(self.learned_from(c, now));
        }
        let mut failures = Vec::new();
        for endpoint in &self.endpoints {
            match self.list(endpoint).await {
                Ok(tags) => {
                    let listing = CachedListing {
                        registry: endpoint.url.clone(),
                        fetched_at: now,
                        tags,
                    };
                    self.write_cache(&listing);
                    return Ok(self.learned_from(&listing, now));
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        if let Some(c) = &cached {
            return Ok(self.learned_from(c, now));
        }
        if failures.is_empty() {
            failures.push(format!("{REGISTRY_ENV}=off: no registry is asked"));
        }
        Err(failures.join("; "))
    }

    async fn list(&self, endpoint: &RegistryEndpoint) -> Result<Vec<String>, String> {
        let mut registry = Registry::new(&endpoint.url, self.timeout).map_err(|e| e.to_string())?;
        if endpoint.mirror {
            registry = registry.mirror_of(self.image.registry);
        }
        registry
            .tags(self.image.repository)
            .await
            .map_err(|e| e.to_string())
    }

    fn learned_from(&self, listing: &CachedListing, now: u64) -> (Vec<String>, ReleasesOrigin) {
        let origin = ReleasesOrigin::Registry {
            registry: listing.registry.clone(),
            repository: self.image.repository.to_string(),
            age_seconds: now.saturating_sub(listing.fetched_at),
        };
        (listing.tags.clone(), origin)
    }

    fn cache_path(&self) -> Option<PathBuf> {
        self.state_dir
            .as_ref()
            .map(|d| d.join(self.image.cache_file))
    }

    /// The cached listing, when it came from one of this lookup's endpoints.
    fn read_cache(&self) -> Option<CachedListing> {
        let path = self.cache_path()?;
        let text = crate::bounded::read_to_string(&path, CACHE_LIMIT).ok()?;
        let listing: CachedListing = serde_json::from_str(&text).ok()?;
        self.endpoints
            .iter()
            .any(|e| e.url == listing.registry)
            .then_some(listing)
    }

    /// Best effort: a cache that cannot be written only costs the next run a registry read.
    fn write_cache(&self, listing: &CachedListing) {
        let Some(path) = self.cache_path() else {
            return;
        };
        let written = serde_json::to_vec(listing)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                crate::atomic_file::write_atomically(&path, &bytes, 0o644)
            });
        if let Err(e) = written {
            tracing::debug!(
                "cannot cache the release listing in {}: {e}",
                path.display()
            );
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The mirror endpoints a machine config names for `ghcr.io`: `machine.registries.mirrors`
/// of the v1alpha1 document (types/v1alpha1 `RegistryMirrorConfig.MirrorEndpoints`), and the
/// `RegistryMirrorConfig` documents of Talos 1.12+ (types/cri/registry_mirror.go: `name`,
/// `endpoints[].url`). A config that does not read gives none.
pub fn installer_mirrors(machine_config: &str) -> Vec<String> {
    let Ok(docs) = ConfigNode::parse_talos_documents(machine_config) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in &docs {
        let legacy = doc
            .at("machine.registries.mirrors")
            .and_then(|m| m.get(INSTALLER_REGISTRY))
            .and_then(|m| m.get("endpoints"));
        if let Some(ConfigNode::Seq(items)) = legacy {
            out.extend(
                items
                    .iter()
                    .filter_map(ConfigNode::as_str)
                    .map(String::from),
            );
        }
        let is_mirror_doc = doc.get("kind").and_then(ConfigNode::as_str)
            == Some("RegistryMirrorConfig")
            && doc.get("name").and_then(ConfigNode::as_str) == Some(INSTALLER_REGISTRY);
        if let (true, Some(ConfigNode::Seq(items))) = (is_mirror_doc, doc.get("endpoints")) {
            out.extend(
                items
                    .iter()
                    .filter_map(|e| e.get("url").and_then(ConfigNode::as_str))
                    .map(String::from),
            );
        }
    }
    out.dedup();
    out
}

/// The mirrors named by the machine config file at `path`, if it reads.
pub fn installer_mirrors_in(path: &Path) -> Vec<String> {
    crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT)
        .map(|text| installer_mirrors(&text))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_from_both_config_shapes() {
        let config = "version: v1alpha1\nmachine:\n  registries:\n    mirrors:\n      ghcr.io:\n        endpoints: [http://127.0.0.1:5001]\n      docker.io:\n        endpoints: [http://other]\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: ghcr.io\nendpoints:\n  - url: https://mirror.local:5000\n---\napiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: registry.k8s.io\nendpoints:\n  - url: https://k8s.local\n";
        assert_eq!(
            installer_mirrors(config),
            ["http://127.0.0.1:5001", "https://mirror.local:5000"]
        );
        assert!(installer_mirrors("machine: [").is_empty());
    }

    #[test]
    fn the_setting_replaces_the_registry_and_off_asks_none() {
        let urls = |l: &ReleaseLookup| {
            l.endpoints
                .iter()
                .map(|e| e.url.clone())
                .collect::<Vec<_>>()
        };
        let default = ReleaseLookup::new(None, vec![], None, false);
        assert_eq!(urls(&default), ["https://ghcr.io"]);
        let local = ReleaseLookup::new(
            Some("http://127.0.0.1:5000"),
            vec!["http://127.0.0.1:5001".into()],
            None,
            false,
        );
        assert_eq!(
            urls(&local),
            ["http://127.0.0.1:5001", "http://127.0.0.1:5000"]
        );
        assert!(local.endpoints[0].mirror && !local.endpoints[1].mirror);
        assert!(
            ReleaseLookup::new(Some("off"), vec![], None, false)
                .endpoints
                .is_empty()
        );
    }

    #[test]
    fn origins_describe_themselves() {
        let r = ReleasesOrigin::Registry {
            registry: "http://127.0.0.1:5000".into(),
            repository: INSTALLER_REPOSITORY.into(),
            age_seconds: 300,
        };
        assert_eq!(
            r.describe(),
            "releases listed by registry http://127.0.0.1:5000 (siderolabs/installer), 5 min ago"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["source"], "registry");
        let b = ReleasesOrigin::BuiltIn {
            reason: "cannot reach it".into(),
        };
        assert_eq!(serde_json::to_value(&b).unwrap()["source"], "built-in");
    }
}
