//! The Talos releases one decision knows of, and where each was learned: the installer
//! image's tags a registry listed, or the built-in table when no registry answered. Pure: the
//! tags come in as text; which registry was asked, and when, is the caller's.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::matrix::known_talos_releases;
use super::version::{Minor, TalosVersion, Version};

/// Where a release was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseSource {
    /// A registry's tags listing.
    Registry,
    /// The table compiled into taloscope (`tables::TALOS_RELEASES`).
    BuiltIn,
}

impl ReleaseSource {
    /// As the JSON names it: "registry" or "built-in".
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseSource::Registry => "registry",
            ReleaseSource::BuiltIn => "built-in",
        }
    }
}

/// One release offered as an upgrade target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferedRelease {
    pub version: TalosVersion,
    pub source: ReleaseSource,
}

/// Known Talos releases with their sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TalosReleases {
    releases: BTreeMap<TalosVersion, ReleaseSource>,
}

impl TalosReleases {
    /// The built-in table's stable releases only.
    pub fn built_in() -> TalosReleases {
        TalosReleases {
            releases: known_talos_releases()
                .into_iter()
                .map(|v| (v, ReleaseSource::BuiltIn))
                .collect(),
        }
    }

    /// The releases a registry listed as installer tags, over the built-in table. Tags that
    /// are not versions (`latest`, digests, `v1.2.3-amd64`-style suffixes are pre-releases by
    /// semver and go with them) are left out; pre-releases only when `pre_release`.
    pub fn from_tags<S: AsRef<str>>(tags: &[S], pre_release: bool) -> TalosReleases {
        let mut releases = TalosReleases::built_in().releases;
        let listed = tags
            .iter()
            .filter(|t| t.as_ref().starts_with('v'))
            .filter_map(|t| Version::parse(t.as_ref()).ok())
            .filter(|v| pre_release || !v.is_pre_release());
        for version in listed {
            releases.insert(version, ReleaseSource::Registry);
        }
        TalosReleases { releases }
    }

    /// Where `version` was learned; `None` when neither the registry nor the table knows it.
    pub fn source_of(&self, version: &TalosVersion) -> Option<ReleaseSource> {
        self.releases.get(version).copied()
    }

    /// Every known release, oldest first.
    pub fn versions(&self) -> impl DoubleEndedIterator<Item = &TalosVersion> {
        self.releases.keys()
    }

    /// The newest known release of `minor`.
    pub fn latest_of(&self, minor: Minor) -> Option<&TalosVersion> {
        self.versions().rfind(|v| v.minor_key() == minor)
    }

    /// The known ones of `targets` as offered: the running minor's patches newest first, then
    /// the next minor's, then any other (a downgrade's) minor.
    pub fn offer(&self, targets: &[TalosVersion], running: Minor) -> Vec<OfferedRelease> {
        let mut ordered: Vec<&TalosVersion> = targets.iter().collect();
        ordered.sort_by(|a, b| {
            let rank = |v: &TalosVersion| match v.minor_key() {
                m if m == running => 0,
                m if m == running.next() => 1,
                _ => 2,
            };
            rank(a).cmp(&rank(b)).then_with(|| b.cmp(a))
        });
        ordered
            .into_iter()
            .filter_map(|v| {
                self.source_of(v).map(|source| OfferedRelease {
                    version: v.clone(),
                    source,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn registry_tags_add_to_the_table_stable_only_unless_asked() {
        let tags = [
            "v1.12.15",
            "v1.14.0",
            "v1.15.0-alpha.1",
            "latest",
            "sha256-abc",
            "1.2",
        ];
        let releases = TalosReleases::from_tags(&tags, false);
        assert_eq!(
            releases.source_of(&v("v1.12.15")),
            Some(ReleaseSource::Registry)
        );
        assert_eq!(
            releases.source_of(&v("v1.12.3")),
            Some(ReleaseSource::BuiltIn)
        );
        assert_eq!(releases.source_of(&v("v1.15.0-alpha.1")), None);
        assert_eq!(releases.latest_of(Minor::new(1, 12)), Some(&v("v1.12.15")));
        assert_eq!(releases.latest_of(Minor::new(1, 14)), Some(&v("v1.14.0")));
        let with_pre = TalosReleases::from_tags(&tags, true);
        assert_eq!(
            with_pre.source_of(&v("v1.15.0-alpha.1")),
            Some(ReleaseSource::Registry)
        );
        assert_eq!(TalosReleases::built_in().source_of(&v("v1.12.15")), None);
    }

    #[test]
    fn offers_the_running_minor_newest_first_then_the_next() {
        let releases = TalosReleases::from_tags(&["v1.12.15", "v1.13.9"], false);
        let offered = releases.offer(
            &[
                v("v1.11.6"),
                v("v1.12.11"),
                v("v1.12.15"),
                v("v1.12.14"),
                v("v1.13.9"),
            ],
            Minor::new(1, 12),
        );
        let order: Vec<String> = offered.iter().map(|o| o.version.to_string()).collect();
        assert_eq!(
            order,
            ["v1.12.15", "v1.12.11", "v1.13.9", "v1.11.6"],
            "v1.12.14 is known to neither"
        );
        assert_eq!(offered[0].source, ReleaseSource::Registry);
        let json = serde_json::to_value(&offered[3]).unwrap();
        assert_eq!(json["source"], "built-in");
        assert_eq!(json["version"], "v1.11.6");
    }
}
