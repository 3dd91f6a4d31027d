//! Version numbers as Talos and Kubernetes print them (`v1.11.3`, `1.34.1`, `v1.13.0-beta.1`):
//! parsing, semver ordering (a pre-release sorts below its release) and the `major.minor` key
//! that the support matrix and the upgrade paths are keyed by.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A Talos or Kubernetes version. Build metadata (`+...`) is dropped on parse: semver gives it
/// no precedence, and keeping it would make two equal versions compare unequal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// Pre-release tag without the dash: `beta.1`, `rc.0`, `alpha.1-15-gabc123`.
    pub pre: Option<String>,
}

/// A Talos OS version, as the Version API reports it (`v1.11.3`).
pub type TalosVersion = Version;
/// A Kubernetes version, as kubelet, static pod image tags or `--to` give it (`v1.34.1`, `1.35.0`).
pub type KubeVersion = Version;

/// `major.minor`: the unit of the support matrix and of "one minor at a time".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Minor {
    pub major: u32,
    pub minor: u32,
}

impl Minor {
    pub const fn new(major: u32, minor: u32) -> Self {
        Minor { major, minor }
    }

    /// The minor after this one within the same major (`1.11` → `1.12`).
    pub fn next(self) -> Minor {
        Minor::new(self.major, self.minor.saturating_add(1))
    }

    /// How many minors `later` is ahead of `self` within one major; `None` across majors or
    /// when `later` is not later.
    pub fn minors_until(self, later: Minor) -> Option<u32> {
        if self.major != later.major {
            return None;
        }
        later.minor.checked_sub(self.minor)
    }
}

impl fmt::Display for Minor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a version string could not be read; the message names the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("cannot read version \"{text}\": expected MAJOR.MINOR.PATCH such as v1.11.3")]
    Shape { text: String },
    #[error("cannot read version \"{text}\": \"{part}\" is not a number")]
    NotANumber { text: String, part: String },
    #[error("cannot read version \"{text}\": empty pre-release after \"-\"")]
    EmptyPreRelease { text: String },
    /// Semantic versioning allows `[0-9A-Za-z-]` identifiers joined by dots;
    /// anything else (a control character from a hostile node) is refused.
    #[error(
        "cannot read version {text:?}: the pre-release may hold only letters, digits, '-' and '.'"
    )]
    BadPreRelease { text: String },
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch,
            pre: None,
        }
    }

    /// Reads `v1.11.3`, `1.11.3`, `v1.13.0-beta.1`; surrounding whitespace is ignored and build
    /// metadata (`+...`) is dropped.
    pub fn parse(text: &str) -> Result<Version, VersionError> {
        let trimmed = text.trim();
        let body = trimmed
            .strip_prefix('v')
            .or_else(|| trimmed.strip_prefix('V'))
            .unwrap_or(trimmed);
        let body = body.split_once('+').map_or(body, |(before, _)| before);
        let (core, pre) = match body.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (body, None),
        };
        if pre == Some("") {
            return Err(VersionError::EmptyPreRelease { text: text.into() });
        }
        let identifier =
            |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if pre.is_some_and(|p| !p.split('.').all(identifier)) {
            return Err(VersionError::BadPreRelease { text: text.into() });
        }
        let parts: Vec<&str> = core.split('.').collect();
        let [major, minor, patch] = parts.as_slice() else {
            return Err(VersionError::Shape { text: text.into() });
        };
        let number = |part: &str| -> Result<u32, VersionError> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(VersionError::NotANumber {
                    text: text.into(),
                    part: part.into(),
                });
            }
            part.parse().map_err(|_| VersionError::NotANumber {
                text: text.into(),
                part: part.into(),
            })
        };
        Ok(Version {
            major: number(major)?,
            minor: number(minor)?,
            patch: number(patch)?,
            pre: pre.map(str::to_owned),
        })
    }

    pub fn minor_key(&self) -> Minor {
        Minor::new(self.major, self.minor)
    }

    pub fn is_pre_release(&self) -> bool {
        self.pre.is_some()
    }

    /// The lowest of a set of versions: a mixed fleet is planned from its oldest node.
    pub fn lowest<'a>(versions: impl IntoIterator<Item = &'a Version>) -> Option<&'a Version> {
        versions.into_iter().min()
    }

    /// The highest of a set of versions.
    pub fn highest<'a>(versions: impl IntoIterator<Item = &'a Version>) -> Option<&'a Version> {
        versions.into_iter().max()
    }
}

/// Semver pre-release precedence: dot-separated identifiers compared left to right, numeric ones
/// numerically and below alphanumeric ones; a shorter list that is a prefix sorts first.
fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (&self.pre, &other.pre) {
                (None, None) => Ordering::Equal,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(a), Some(b)) => compare_pre(a, b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

impl FromStr for Version {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Version::parse(text)
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Version::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).expect("test version parses")
    }

    #[test]
    fn a_pre_release_holds_semver_identifiers_only() {
        // Found by the `version` fuzz target: form feeds were accepted and
        // printed back as a version that does not parse.
        for bad in [
            "v1.3.10-\u{c}\u{c}+\u{c}",
            "v1.2.3-a\u{1b}[2J",
            "v1.2.3-a..b",
            "v1.2.3-é",
        ] {
            assert!(
                matches!(Version::parse(bad), Err(VersionError::BadPreRelease { .. })),
                "{bad:?}"
            );
        }
        assert!(Version::parse("v1.13.0-beta.1-rc-2").is_ok());
    }

    #[test]
    fn parses_with_and_without_v_and_pre_release() {
        assert_eq!(v("v1.11.3"), Version::new(1, 11, 3));
        assert_eq!(v("1.11.3"), Version::new(1, 11, 3));
        assert_eq!(v("  V1.34.1\n"), Version::new(1, 34, 1));
        let beta = v("v1.13.0-beta.1");
        assert_eq!(beta.minor_key(), Minor::new(1, 13));
        assert_eq!(beta.pre.as_deref(), Some("beta.1"));
        assert!(beta.is_pre_release());
        let dev = v("v1.12.0-alpha.1-15-gabc123");
        assert_eq!(dev.pre.as_deref(), Some("alpha.1-15-gabc123"));
    }

    #[test]
    fn drops_build_metadata() {
        assert_eq!(v("v1.34.1+k3s1"), Version::new(1, 34, 1));
        assert_eq!(
            v("1.35.0-rc.0+abc").pre.as_deref(),
            Some("rc.0"),
            "pre-release kept, metadata dropped"
        );
    }

    #[test]
    fn display_round_trips_with_v() {
        assert_eq!(v("1.34.1").to_string(), "v1.34.1");
        assert_eq!(v("v1.13.0-beta.1").to_string(), "v1.13.0-beta.1");
        assert_eq!(v(&v("v1.13.0-rc.0").to_string()), v("1.13.0-rc.0"));
        assert_eq!(Minor::new(1, 11).to_string(), "1.11");
    }

    #[test]
    fn parse_errors_name_the_text() {
        for bad in [
            "", "v", "1.11", "1.11.3.4", "v1.x.3", "1..3", "-1.2.3", "1.2.3-", "latest",
        ] {
            let err = Version::parse(bad).expect_err(bad);
            assert!(
                err.to_string().contains(&format!("\"{bad}\"")),
                "{bad}: {err}"
            );
        }
        assert!(matches!(
            Version::parse("1.2"),
            Err(VersionError::Shape { .. })
        ));
        assert!(matches!(
            Version::parse("1.two.3"),
            Err(VersionError::NotANumber { part, .. }) if part == "two"
        ));
        assert!(matches!(
            Version::parse("1.2.99999999999"),
            Err(VersionError::NotANumber { .. })
        ));
        assert!(matches!(
            Version::parse("1.2.3-"),
            Err(VersionError::EmptyPreRelease { .. })
        ));
    }

    #[test]
    fn pre_releases_sort_below_their_release() {
        let mut list = [
            v("v1.13.0"),
            v("v1.13.0-rc.0"),
            v("v1.13.0-beta.1"),
            v("v1.13.0-alpha.10"),
            v("v1.13.0-alpha.2"),
            v("v1.12.11"),
            v("v1.12.2"),
            v("v1.13.0-beta"),
        ];
        list.sort();
        let names: Vec<String> = list.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "v1.12.2",
                "v1.12.11",
                "v1.13.0-alpha.2",
                "v1.13.0-alpha.10",
                "v1.13.0-beta",
                "v1.13.0-beta.1",
                "v1.13.0-rc.0",
                "v1.13.0",
            ]
        );
    }

    #[test]
    fn numeric_identifiers_sort_below_alphanumeric_ones() {
        assert!(v("1.0.0-1") < v("1.0.0-alpha"));
        assert!(v("1.0.0-alpha.1") < v("1.0.0-alpha.beta"));
    }

    #[test]
    fn lowest_and_highest_of_a_fleet() {
        let fleet = [v("v1.11.3"), v("v1.10.9"), v("v1.11.3"), v("v1.11.0-rc.0")];
        assert_eq!(Version::lowest(&fleet), Some(&v("v1.10.9")));
        assert_eq!(Version::highest(&fleet), Some(&v("v1.11.3")));
        assert_eq!(Version::lowest(&[]), None);
    }

    #[test]
    fn minor_steps() {
        let m = Minor::new(1, 11);
        assert_eq!(m.next(), Minor::new(1, 12));
        assert_eq!(m.minors_until(Minor::new(1, 13)), Some(2));
        assert_eq!(m.minors_until(Minor::new(1, 10)), None);
        assert_eq!(m.minors_until(Minor::new(2, 11)), None);
    }

    #[test]
    fn serde_as_string() {
        let json = serde_json::to_string(&v("1.35.0")).expect("serialises");
        assert_eq!(json, "\"v1.35.0\"");
        let back: Version = serde_json::from_str("\"v1.13.0-beta.1\"").expect("deserialises");
        assert_eq!(back, v("1.13.0-beta.1"));
        assert!(serde_json::from_str::<Version>("\"nope\"").is_err());
    }
}
