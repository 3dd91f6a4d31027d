//! Who the console is to one API server, from a kube context as kube's config
//! loader resolved it: the TLS trust and client identity, and the token, basic
//! or exec-plugin credentials every request carries.
use base64::Engine;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use std::process::Stdio;
use std::time::Duration;

use kube::config::{AuthInfo, ExecConfig};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;

/// How long an exec plugin may take to print its credential.
pub const EXEC_PLUGIN_TIMEOUT: Duration = Duration::from_secs(10);
/// The most an exec plugin may print; a credential is a few kilobytes.
const MAX_PLUGIN_OUTPUT: u64 = 1024 * 1024;

/// A token from an exec plugin is run for again this long before it expires.
const EXEC_REFRESH_MARGIN: SignedDuration = SignedDuration::from_secs(10);

/// What a request is authorized with.
pub(super) enum Credentials {
    /// Client certificate only (as talosctl's kubeconfigs), or nothing.
    None,
    Bearer(SecretString),
    /// kubectl's `tokenFile`: read again for every request, so a rotated token is used.
    TokenFile(String),
    Basic {
        username: String,
        password: Option<SecretString>,
    },
    /// A credential plugin's token, kept until it expires.
    Exec {
        plugin: Box<ExecConfig>,
        token: Mutex<Option<ExecToken>>,
    },
}

pub(super) struct ExecToken {
    token: SecretString,
    expires: Option<Timestamp>,
}

/// The client side of TLS: the client certificate and key, in one PEM.
pub(super) struct Identity(pub Vec<u8>);

/// An exec plugin's answer (`client.authentication.k8s.io` ExecCredential status).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecStatus {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    expiration_timestamp: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ExecCredential {
    status: Option<ExecStatus>,
}

/// The credentials and client identity of `auth`. Runs the exec plugin once,
/// if there is one, since it may answer with a client certificate.
pub(super) async fn from_auth_info(
    auth: &AuthInfo,
) -> Result<(Credentials, Option<Identity>), String> {
    let mut identity = file_identity(auth)?;
    let credentials = if let Some(plugin) = &auth.exec {
        let status = run_exec(plugin).await?;
        if let (Some(cert), Some(key)) = (&status.client_certificate_data, &status.client_key_data)
        {
            identity = Some(Identity(format!("{cert}\n{key}\n").into_bytes()));
        }
        Credentials::Exec {
            plugin: Box::new(plugin.clone()),
            token: Mutex::new(exec_token(status)?),
        }
    } else if let Some(token) = &auth.token {
        Credentials::Bearer(token.clone())
    } else if let Some(file) = &auth.token_file {
        Credentials::TokenFile(file.clone())
    } else if let Some(username) = &auth.username {
        Credentials::Basic {
            username: username.clone(),
            password: auth.password.clone(),
        }
    } else if let Some(provider) = &auth.auth_provider {
        match provider.config.get("access-token") {
            Some(token) => Credentials::Bearer(token.clone().into()),
            None => {
                return Err(format!(
                    "auth-provider {:?} is not supported; use an exec credential plugin",
                    provider.name
                ));
            }
        }
    } else {
        Credentials::None
    };
    Ok((credentials, identity))
}

impl Credentials {
    /// `req` with the Authorization header these credentials give, if any.
    pub(super) async fn authorize(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, String> {
        Ok(match self {
            Credentials::None => req,
            Credentials::Bearer(token) => req.bearer_auth(token.expose_secret()),
            Credentials::TokenFile(file) => {
                let token = tokio::fs::read_to_string(file)
                    .await
                    .map_err(|e| format!("reading tokenFile {file}: {e}"))?;
                req.bearer_auth(token.trim())
            }
            Credentials::Basic { username, password } => req.basic_auth(
                username,
                password.as_ref().map(|p| p.expose_secret().to_string()),
            ),
            Credentials::Exec { plugin, token } => {
                let mut held = token.lock().await;
                if held.as_ref().is_none_or(ExecToken::expiring) {
                    *held = exec_token(run_exec(plugin).await?)?;
                }
                match held.as_ref() {
                    Some(t) => req.bearer_auth(t.token.expose_secret()),
                    None => req,
                }
            }
        })
    }
}

impl ExecToken {
    fn expiring(&self) -> bool {
        self.expires
            .is_some_and(|at| at.duration_since(Timestamp::now()) <= EXEC_REFRESH_MARGIN)
    }
}

fn exec_token(status: ExecStatus) -> Result<Option<ExecToken>, String> {
    let Some(token) = status.token else {
        return Ok(None);
    };
    let expires = match status.expiration_timestamp {
        Some(at) => Some(
            at.parse::<Timestamp>()
                .map_err(|e| format!("exec plugin expirationTimestamp {at:?}: {e}"))?,
        ),
        None => None,
    };
    Ok(Some(ExecToken {
        token: token.into(),
        expires,
    }))
}

/// The client certificate and key from the kubeconfig's data or files.
fn file_identity(auth: &AuthInfo) -> Result<Option<Identity>, String> {
    let cert = data_or_file(
        auth.client_certificate_data.as_deref(),
        auth.client_certificate.as_deref(),
        "client certificate",
    )?;
    let key = data_or_file(
        auth.client_key_data.as_ref().map(|k| k.expose_secret()),
        auth.client_key.as_deref(),
        "client key",
    )?;
    Ok(match (cert, key) {
        (Some(mut cert), Some(key)) => {
            if cert.last() != Some(&b'\n') {
                cert.push(b'\n');
            }
            cert.extend(key);
            Some(Identity(cert))
        }
        _ => None,
    })
}

/// The client certificate (PEM bytes) kubeconfig user `user` authenticates with; `None` when it
/// uses a token, an exec plugin or nothing.
pub fn client_certificate(
    kubeconfig: &kube::config::Kubeconfig,
    user: &str,
) -> Result<Option<Vec<u8>>, String> {
    let Some(auth) = kubeconfig
        .auth_infos
        .iter()
        .find(|a| a.name == user)
        .and_then(|a| a.auth_info.as_ref())
    else {
        return Ok(None);
    };
    data_or_file(
        auth.client_certificate_data.as_deref(),
        auth.client_certificate.as_deref(),
        "client certificate",
    )
}

/// Base64 `data` when there is some, else the contents of `file`.
fn data_or_file(
    data: Option<&str>,
    file: Option<&str>,
    what: &str,
) -> Result<Option<Vec<u8>>, String> {
    match (data, file) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|e| format!("{what} data is not base64: {e}")),
        (None, Some(file)) => std::fs::read(file)
            .map(Some)
            .map_err(|e| format!("reading {what} {file}: {e}")),
        (None, None) => Ok(None),
    }
}

/// Runs the plugin as kubectl does (`KUBERNETES_EXEC_INFO`, its env, args and
/// cluster info), but never on the terminal (stdin closed: the console owns
/// it), killed when it outlives [`EXEC_PLUGIN_TIMEOUT`] or the caller goes away,
/// and read up to [`MAX_PLUGIN_OUTPUT`].
async fn run_exec(plugin: &ExecConfig) -> Result<ExecStatus, String> {
    let command = plugin
        .command
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or("exec plugin without a command")?;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(plugin.args.iter().flatten());
    for pair in plugin.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            cmd.env(name, value);
        }
    }
    let mut spec = serde_json::json!({ "interactive": false });
    if plugin.provide_cluster_info {
        let cluster = plugin
            .cluster
            .as_ref()
            .ok_or("exec plugin asks for cluster info, but there is none")?;
        spec["cluster"] = serde_json::to_value(cluster).map_err(|e| e.to_string())?;
    }
    let info = serde_json::json!({
        "apiVersion": plugin.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    });
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in plugin.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    let out = bounded_output(cmd, command).await?;
    let credential: ExecCredential = serde_json::from_slice(&out)
        .map_err(|e| format!("exec plugin {command} answered no ExecCredential: {e}"))?;
    credential
        .status
        .ok_or_else(|| format!("exec plugin {command} answered an ExecCredential without status"))
}

/// The plugin's stdout once it exited successfully, within the timeout and
/// the output cap; dropping the child on timeout kills it.
async fn bounded_output(
    mut cmd: tokio::process::Command,
    command: &str,
) -> Result<Vec<u8>, String> {
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("exec plugin {command}: cannot start: {e}"))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let finished = tokio::time::timeout(EXEC_PLUGIN_TIMEOUT, async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s.take(MAX_PLUGIN_OUTPUT + 1).read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.take(64 * 1024).read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        (child.wait().await, out, err)
    })
    .await;
    let Ok((status, out, err)) = finished else {
        return Err(format!(
            "exec plugin {command} did not finish within {EXEC_PLUGIN_TIMEOUT:?}; it was stopped"
        ));
    };
    let status = status.map_err(|e| format!("exec plugin {command}: {e}"))?;
    if !status.success() {
        let said = String::from_utf8_lossy(&err);
        return Err(format!(
            "exec plugin {command} failed ({status}): {}",
            said.lines().next().unwrap_or_default().trim()
        ));
    }
    if out.len() as u64 > MAX_PLUGIN_OUTPUT {
        return Err(format!("exec plugin {command} printed more than 1 MiB"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_the_certificate_then_the_key() {
        let auth = AuthInfo {
            client_certificate_data: Some(base64::engine::general_purpose::STANDARD.encode("CERT")),
            client_key_data: Some(
                base64::engine::general_purpose::STANDARD
                    .encode("KEY\n")
                    .into(),
            ),
            ..AuthInfo::default()
        };
        let Identity(pem) = file_identity(&auth).unwrap().expect("an identity");
        assert_eq!(pem, b"CERT\nKEY\n");
    }

    #[test]
    fn exec_tokens_expire_and_are_refreshed_before() {
        let status = |at: &str| ExecStatus {
            token: Some("t".into()),
            expiration_timestamp: Some(at.into()),
            ..ExecStatus::default()
        };
        let old = exec_token(status("2000-01-01T00:00:00Z")).unwrap().unwrap();
        assert!(old.expiring());
        let new = exec_token(status("2999-01-01T00:00:00Z")).unwrap().unwrap();
        assert!(!new.expiring());
        assert!(exec_token(status("yesterday")).is_err());
    }

    #[tokio::test]
    async fn an_exec_plugin_gets_its_env_and_exec_info_and_its_token_is_used() {
        let plugin = ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: Some("sh".into()),
            args: Some(vec![
                "-c".into(),
                r#"printf '{"status":{"token":"%s-%s"}}' "$GREETING" "$(printf '%s' "$KUBERNETES_EXEC_INFO" | grep -c ExecCredential)""#.into(),
            ]),
            env: Some(vec![
                [("name".to_string(), "GREETING".to_string()), ("value".to_string(), "hi".to_string())]
                    .into_iter()
                    .collect(),
            ]),
            interactive_mode: Some(kube::config::ExecInteractiveMode::Never),
            ..ExecConfig::default()
        };
        let auth = AuthInfo {
            exec: Some(plugin),
            ..AuthInfo::default()
        };
        let (credentials, identity) = from_auth_info(&auth).await.expect("credentials");
        assert!(identity.is_none());
        crate::install_crypto_provider();
        let req = reqwest::Client::new().get("http://127.0.0.1:1/");
        let req = credentials.authorize(req).await.unwrap().build().unwrap();
        assert_eq!(req.headers()["authorization"], "Bearer hi-1");
    }

    #[tokio::test]
    async fn a_failing_exec_plugin_says_what_it_printed() {
        let plugin = ExecConfig {
            command: Some("/bin/sh".into()),
            args: Some(vec!["-c".into(), "echo no login >&2; exit 3".into()]),
            ..ExecConfig::default()
        };
        let err = run_exec(&plugin).await.unwrap_err();
        assert!(
            err.contains("no login") && err.contains("exit status: 3"),
            "{err}"
        );
    }
}
