//! Credentials and endpoints as OpenNebula's own CLI finds them: a `ONE_AUTH`
//! file (default `~/.one/one_auth`, one `user:password` line), `ONE_XMLRPC`
//! and `ONEFLOW_URL`, unless the provider's config says otherwise.
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::errors::OneError;

/// XML-RPC endpoint when neither the config nor `ONE_XMLRPC` names one.
pub const DEFAULT_XMLRPC: &str = "http://localhost:2633/RPC2";
/// OneFlow endpoint when neither the config nor `ONEFLOW_URL` names one.
pub const DEFAULT_ONEFLOW: &str = "http://localhost:2474";

/// The variables OpenNebula's CLI reads, captured once where the process environment is read
/// (commands/) and handed down as a value; an empty variable counts as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OneEnvironment {
    vars: BTreeMap<&'static str, String>,
}

impl OneEnvironment {
    /// The variables captured: the one_auth file, the home it defaults under, the endpoints.
    pub const NAMES: [&'static str; 4] = ["ONE_AUTH", "HOME", "ONE_XMLRPC", "ONEFLOW_URL"];

    /// Captures [`Self::NAMES`] through `lookup` (the process environment in commands/, a
    /// table in tests).
    pub fn capture(lookup: &dyn Fn(&str) -> Option<String>) -> OneEnvironment {
        let vars = Self::NAMES
            .into_iter()
            .filter_map(|name| lookup(name).filter(|v| !v.is_empty()).map(|v| (name, v)))
            .collect();
        OneEnvironment { vars }
    }

    /// A captured variable, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// A user and password. Debug never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Credentials {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Credentials {
        Credentials {
            username: username.into(),
            password: password.into(),
        }
    }

    /// The XML-RPC session string (`user:password`, the `core` auth driver).
    pub(crate) fn session(&self) -> String {
        format!("{}:{}", self.username, self.password)
    }

    pub(crate) fn password(&self) -> &str {
        &self.password
    }

    /// Parses a one_auth file's text: the first non-empty line, `user:password`.
    pub fn parse_one_auth(text: &str) -> Result<Credentials, String> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .ok_or("the file is empty; it should hold one line user:password")?;
        match line.split_once(':') {
            Some((user, password)) if !user.is_empty() => Ok(Credentials::new(user, password)),
            _ => Err("the first line is not user:password".into()),
        }
    }
}

/// Where a provider's credentials come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSource {
    /// user and password written in the config.
    Inline(Credentials),
    /// A one_auth-style file named in the config.
    File(PathBuf),
    /// `ONE_AUTH`, else `~/.one/one_auth`.
    Environment,
}

/// Reads the credentials for `provider`; `env` is the environment commands/ captured.
pub fn credentials(
    provider: &str,
    source: &AuthSource,
    env: &OneEnvironment,
) -> Result<Credentials, OneError> {
    let path = match source {
        AuthSource::Inline(c) => return Ok(c.clone()),
        AuthSource::File(path) => path.clone(),
        AuthSource::Environment => default_auth_file(env).ok_or_else(|| OneError::Credentials {
            provider: provider.to_string(),
            path: PathBuf::from("~/.one/one_auth"),
            message: "neither ONE_AUTH nor HOME is set".into(),
        })?,
    };
    read_auth_file(provider, &path)
}

fn default_auth_file(env: &OneEnvironment) -> Option<PathBuf> {
    env.var("ONE_AUTH")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(h).join(".one/one_auth")))
}

fn read_auth_file(provider: &str, path: &Path) -> Result<Credentials, OneError> {
    let err = |message: String| OneError::Credentials {
        provider: provider.to_string(),
        path: path.to_path_buf(),
        message,
    };
    let text = crate::bounded::read_to_string(path, crate::bounded::CONFIG_FILE_LIMIT)
        .map_err(|e| err(format!("cannot read: {e}")))?;
    Credentials::parse_one_auth(&text).map_err(|m| err(m.to_string()))
}

/// Which protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    XmlRpc,
    OneFlow,
}

/// The endpoint: the configured one, else `ONE_XMLRPC` / `ONEFLOW_URL`, else
/// OpenNebula's defaults. Checked to be an http(s) URL.
pub fn endpoint(
    provider: &str,
    protocol: Protocol,
    configured: Option<&str>,
    env: &OneEnvironment,
) -> Result<String, OneError> {
    let (var, default) = match protocol {
        Protocol::XmlRpc => ("ONE_XMLRPC", DEFAULT_XMLRPC),
        Protocol::OneFlow => ("ONEFLOW_URL", DEFAULT_ONEFLOW),
    };
    let url = configured
        .or_else(|| env.var(var))
        .unwrap_or(default)
        .to_string();
    let parsed = reqwest::Url::parse(&url).ok();
    match parsed {
        Some(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(url),
        _ => Err(OneError::Endpoint {
            provider: provider.to_string(),
            endpoint: url,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(name: &'static str, value: &str) -> OneEnvironment {
        let value = value.to_string();
        OneEnvironment::capture(&move |k: &str| (k == name).then(|| value.clone()))
    }

    #[test]
    fn one_auth_text() {
        let c = Credentials::parse_one_auth("\n oneadmin:pa:ss \n").unwrap();
        assert_eq!(c.username, "oneadmin");
        assert_eq!(c.password(), "pa:ss");
        assert!(Credentials::parse_one_auth("").is_err());
        assert!(Credentials::parse_one_auth("nocolon").is_err());
        assert!(Credentials::parse_one_auth(":pw").is_err());
        assert!(!format!("{c:?}").contains("pa:ss"));
    }

    #[test]
    fn auth_file_from_env_then_home() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth");
        std::fs::write(&file, "alice:wonder\n").unwrap();
        let env = env_of("ONE_AUTH", &file.to_string_lossy());
        let c = credentials("lab", &AuthSource::Environment, &env).unwrap();
        assert_eq!(c.session(), "alice:wonder");

        std::fs::create_dir_all(dir.path().join(".one")).unwrap();
        std::fs::write(dir.path().join(".one/one_auth"), "bob:builder").unwrap();
        let env = env_of("HOME", &dir.path().to_string_lossy());
        let c = credentials("lab", &AuthSource::Environment, &env).unwrap();
        assert_eq!(c.username, "bob");
        let unset = env_of("ONE_AUTH", "");
        assert_eq!(
            unset,
            OneEnvironment::default(),
            "an empty variable is unset"
        );
    }

    #[test]
    fn missing_auth_file_names_provider_and_path() {
        let err = credentials(
            "lab",
            &AuthSource::File("/nonexistent/one_auth".into()),
            &OneEnvironment::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("provider lab") && err.contains("/nonexistent/one_auth"),
            "{err}"
        );
    }

    #[test]
    fn endpoints_from_config_env_default() {
        let no_env = OneEnvironment::default();
        assert_eq!(
            endpoint("p", Protocol::XmlRpc, None, &no_env).unwrap(),
            DEFAULT_XMLRPC
        );
        let env = env_of("ONEFLOW_URL", "http://127.0.0.1:2474");
        assert_eq!(
            endpoint("p", Protocol::OneFlow, None, &env).unwrap(),
            "http://127.0.0.1:2474"
        );
        assert_eq!(
            endpoint("p", Protocol::OneFlow, Some("https://one:2474"), &env).unwrap(),
            "https://one:2474"
        );
        assert!(endpoint("p", Protocol::XmlRpc, Some("ftp://x"), &no_env).is_err());
        assert!(endpoint("p", Protocol::XmlRpc, Some("not a url"), &no_env).is_err());
    }
}
