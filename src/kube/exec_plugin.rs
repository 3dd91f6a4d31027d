//! kubeconfig exec credential plugins, run by taloscope rather than by the
//! kube crate (which waits on them synchronously, forever): an async child
//! process under a timeout, killed when the wait is dropped, output capped.
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use base64::Engine;
use kube::config::{ExecConfig, Kubeconfig};
use serde::Deserialize;
use tokio::io::AsyncReadExt;

/// How long a plugin may take to print its credential.
pub const EXEC_PLUGIN_TIMEOUT: Duration = Duration::from_secs(10);
/// The most a plugin may print; a credential is a few kilobytes.
const MAX_PLUGIN_OUTPUT: u64 = 1024 * 1024;

/// `ExecCredential.status` as plugins print it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CredentialStatus {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    expiration_timestamp: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ExecCredential {
    status: Option<CredentialStatus>,
}

/// `kubeconfig` with the exec plugin of `context`'s user (if it has one)
/// already run and its credential written in, so the kube crate never runs
/// it; and when that credential expires.
pub async fn resolve(
    kubeconfig: &Kubeconfig,
    context: &str,
    timeout: Duration,
) -> Result<(Kubeconfig, Option<SystemTime>), String> {
    let mut resolved = kubeconfig.clone();
    let user = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.user.clone());
    let Some(auth) = user.and_then(|user| {
        resolved
            .auth_infos
            .iter_mut()
            .find(|a| a.name == user)
            .and_then(|a| a.auth_info.as_mut())
    }) else {
        return Ok((resolved, None));
    };
    let Some(exec) = auth.exec.take() else {
        return Ok((resolved, None));
    };
    let status = run(&exec, timeout).await?;
    let expires = status
        .expiration_timestamp
        .as_deref()
        .and_then(crate::clock::parse_utc_timestamp);
    let b64 = |pem: String| base64::engine::general_purpose::STANDARD.encode(pem);
    match (
        status.token,
        status.client_certificate_data,
        status.client_key_data,
    ) {
        (Some(token), _, _) => auth.token = Some(token.into()),
        (None, Some(crt), Some(key)) => {
            auth.client_certificate_data = Some(b64(crt));
            auth.client_key_data = Some(b64(key).into());
        }
        _ => {
            return Err(
                "the exec plugin's credential has neither a token nor a client certificate and key"
                    .into(),
            );
        }
    }
    Ok((resolved, expires))
}

/// Runs the plugin: no terminal (stdin closed), `KUBERNETES_EXEC_INFO` set,
/// killed when `timeout` passes or the caller goes away.
async fn run(exec: &ExecConfig, timeout: Duration) -> Result<CredentialStatus, String> {
    let command = exec
        .command
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or("the exec plugin has no command")?;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(exec.args.iter().flatten())
        .envs(
            exec.env
                .iter()
                .flatten()
                .filter_map(|pair| Some((pair.get("name")?.clone(), pair.get("value")?.clone()))),
        )
        .env("KUBERNETES_EXEC_INFO", exec_info(exec))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start exec plugin {command:?}: {e}"))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let finished = tokio::time::timeout(timeout, async {
        let mut out = Vec::new();
        let mut err = Vec::new();
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
        // Dropping `child` (kill_on_drop) ends the plugin.
        return Err(format!(
            "exec plugin {command:?} did not finish within {timeout:?}; it was stopped"
        ));
    };
    let status = status.map_err(|e| format!("exec plugin {command:?}: {e}"))?;
    if !status.success() {
        let said = String::from_utf8_lossy(&err);
        let said = said.lines().next().unwrap_or_default();
        return Err(format!("exec plugin {command:?} failed ({status}): {said}"));
    }
    if out.len() as u64 > MAX_PLUGIN_OUTPUT {
        return Err(format!("exec plugin {command:?} printed more than 1 MiB"));
    }
    let credential: ExecCredential = serde_saphyr::from_slice(&out)
        .map_err(|e| format!("exec plugin {command:?} printed no ExecCredential: {e}"))?;
    credential
        .status
        .ok_or_else(|| format!("exec plugin {command:?} printed an ExecCredential without status"))
}

fn exec_info(exec: &ExecConfig) -> String {
    serde_json::json!({
        "apiVersion": exec.api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": false},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(command: &str, args: &[&str]) -> Kubeconfig {
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        Kubeconfig::from_yaml(&format!(
            "apiVersion: v1\nkind: Config\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\n\
             clusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:6443\"}}\n\
             users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
             command: {command:?}\n      args: [{}]\n",
            args.join(", ")
        ))
        .unwrap()
    }

    #[tokio::test]
    async fn a_plugin_that_never_exits_is_stopped_within_the_timeout() {
        let config = kubeconfig("/bin/sleep", &["1000"]);
        let started = std::time::Instant::now();
        let err = resolve(&config, "x", Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(err.contains("did not finish within 300ms"), "{err}");
    }

    #[tokio::test]
    async fn a_token_is_written_in_and_the_exec_removed() {
        let credential = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let config = kubeconfig("/bin/echo", &[credential]);
        let (resolved, expires) = resolve(&config, "x", EXEC_PLUGIN_TIMEOUT).await.unwrap();
        let auth = resolved.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(auth.exec.is_none() && auth.token.is_some());
        assert_eq!(
            expires,
            crate::clock::parse_utc_timestamp("2030-01-01T00:00:00Z")
        );
    }

    #[tokio::test]
    async fn a_failing_plugin_says_what_it_printed() {
        let config = kubeconfig("/bin/sh", &["-c", "echo no login >&2; exit 3"]);
        let err = resolve(&config, "x", EXEC_PLUGIN_TIMEOUT)
            .await
            .unwrap_err();
        assert!(
            err.contains("no login") && err.contains("exit status: 3"),
            "{err}"
        );
    }
}
