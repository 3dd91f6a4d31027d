//! The XML-RPC client for one OpenNebula endpoint: the session string first
//! in every call, OpenNebula's `[ok, result, code]` replies turned into typed
//! values or [`OneError`]s. Parameters are never logged (they hold the
//! password and USER_DATA).
use std::time::Duration;

use super::auth::Credentials;
use super::errors::{FailureKind, OneError, Origin, chain};
use super::quota::QuotaHolder;
use super::template::{ExtraTemplate, TemplateInfo, templates_from_pool};
use super::vm::{VmInfo, vms_from_pool};
use super::xml;
use super::xmlrpc::{self, OneReply, Response, Value};

/// Pool filter `-2`: every object the user may see.
const POOL_ALL: i64 = -2;
/// vmpool state `-1`: any state except DONE.
const ANY_BUT_DONE: i64 = -1;

/// The HTTP client both OpenNebula clients (XML-RPC and OneFlow) use.
pub(super) fn http_client(at: &Origin, timeout: Duration) -> Result<reqwest::Client, OneError> {
    // reqwest panics without a process crypto provider; installing ring
    // again is a no-op.
    crate::install_crypto_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .build()
        .map_err(|e| OneError::Transport {
            at: at.clone(),
            call: "client setup".into(),
            message: chain(&e),
        })
}

/// The largest answer read from an OpenNebula endpoint. A pool of a few
/// thousand VMs is a few megabytes; anything near this is not OpenNebula.
pub const MAX_REPLY_BYTES: usize = crate::bounded::HTTP_BODY_LIMIT;

/// Sends `req` and reads the answer, at most [`MAX_REPLY_BYTES`]; the status
/// is the caller's to judge.
pub(super) async fn send(
    req: reqwest::RequestBuilder,
    transport: impl Fn(String) -> OneError,
) -> Result<(reqwest::StatusCode, String), OneError> {
    let resp = req
        .send()
        .await
        .map_err(|e| transport(format!("cannot reach the endpoint: {}", chain(&e))))?;
    let status = resp.status();
    let body = crate::bounded::read_body(resp, MAX_REPLY_BYTES)
        .await
        .map_err(|m| transport(format!("reading the answer: {m}")))?;
    // As reqwest's `text()` did: invalid UTF-8 becomes U+FFFD.
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// A client for one provider's XML-RPC endpoint. Cheap to clone.
#[derive(Clone)]
pub struct OneClient {
    http: reqwest::Client,
    at: Origin,
    credentials: Credentials,
}

impl std::fmt::Debug for OneClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneClient")
            .field("at", &self.at)
            .field("username", &self.credentials.username)
            .finish_non_exhaustive()
    }
}

impl OneClient {
    /// A client for `endpoint` (e.g. `http://host:2633/RPC2`); dials nothing yet.
    pub fn new(
        provider: &str,
        endpoint: &str,
        credentials: Credentials,
        timeout: Duration,
    ) -> Result<OneClient, OneError> {
        let at = Origin::new(provider, endpoint);
        let http = http_client(&at, timeout)?;
        Ok(OneClient {
            http,
            at,
            credentials,
        })
    }

    pub fn origin(&self) -> &Origin {
        &self.at
    }

    /// One call; `params` follow the session string.
    async fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, OneError> {
        let mut all = Vec::with_capacity(params.len() + 1);
        all.push(Value::Str(self.credentials.session()));
        all.extend(params);
        let body = xmlrpc::encode_call(method, &all);
        tracing::debug!(provider = %self.at.provider, method, "XML-RPC call");
        let transport = |message: String| OneError::Transport {
            at: self.at.clone(),
            call: method.to_string(),
            message,
        };
        let req = self
            .http
            .post(&self.at.endpoint)
            .header(reqwest::header::CONTENT_TYPE, "text/xml")
            .body(body);
        let (status, text) = send(req, &transport).await?;
        if !status.is_success() {
            return Err(transport(format!("HTTP {status}")));
        }
        let decode = |message: String| OneError::Decode {
            at: self.at.clone(),
            call: method.to_string(),
            message,
        };
        match xmlrpc::decode_response(&text).map_err(decode)? {
            Response::Fault { code, message } => Err(transport(format!(
                "XML-RPC fault {code}: {}",
                scrub(&message, self.credentials.password())
            ))),
            Response::Value(v) => match xmlrpc::one_reply(v).map_err(decode)? {
                OneReply::Ok(v) => Ok(v),
                OneReply::Failed { code, message } => Err(OneError::Failed {
                    at: self.at.clone(),
                    call: method.to_string(),
                    kind: FailureKind::from_code(code),
                    message: scrub(&message, self.credentials.password()),
                }),
            },
        }
    }

    async fn call_document(
        &self,
        method: &str,
        params: Vec<Value>,
    ) -> Result<xml::Element, OneError> {
        let doc = match self.call(method, params).await? {
            Value::Str(s) => s,
            other => {
                return Err(
                    self.decode_error(method, format!("expected an XML document, got {other:?}"))
                );
            }
        };
        xml::parse(&doc).map_err(|m| self.decode_error(method, m))
    }

    async fn call_id(&self, method: &str, params: Vec<Value>) -> Result<u64, OneError> {
        match self.call(method, params).await? {
            Value::Int(id) if id >= 0 => Ok(id as u64),
            other => {
                Err(self.decode_error(method, format!("expected an object id, got {other:?}")))
            }
        }
    }

    fn decode_error(&self, call: &str, message: String) -> OneError {
        OneError::Decode {
            at: self.at.clone(),
            call: call.to_string(),
            message,
        }
    }

    /// `one.system.version`: the OpenNebula version (and a credentials check).
    pub async fn version(&self) -> Result<String, OneError> {
        const M: &str = "one.system.version";
        match self.call(M, vec![]).await? {
            Value::Str(v) => Ok(v),
            other => Err(self.decode_error(M, format!("expected a version string, got {other:?}"))),
        }
    }

    /// `one.templatepool.info`: every VM template the user may see.
    pub async fn templates(&self) -> Result<Vec<TemplateInfo>, OneError> {
        let pool = self
            .call_document(
                "one.templatepool.info",
                vec![POOL_ALL.into(), (-1).into(), (-1).into()],
            )
            .await?;
        Ok(templates_from_pool(&pool))
    }

    /// `one.template.info`: one template with its CONTEXT.
    pub async fn template(&self, id: u64) -> Result<TemplateInfo, OneError> {
        const M: &str = "one.template.info";
        let doc = self
            .call_document(M, vec![to_int(id), false.into(), false.into()])
            .await?;
        TemplateInfo::from_element(&doc).map_err(|m| self.decode_error(M, m))
    }

    /// A template by name (the pool, then `one.template.info` for its CONTEXT).
    pub async fn template_named(&self, name: &str) -> Result<TemplateInfo, OneError> {
        let templates = self.templates().await?;
        let found = templates.iter().find(|t| t.name == name).ok_or_else(|| {
            let known: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
            OneError::NotFound {
                at: self.at.clone(),
                what: "VM template",
                name: name.to_string(),
                hint: if known.is_empty() {
                    "the endpoint lists no templates for this user".into()
                } else {
                    format!("templates here: {}", known.join(", "))
                },
            }
        })?;
        self.template(found.id).await
    }

    /// `one.user.info -1`: the caller's own user with its VM quota and the default user
    /// quotas (src/rm/api/SharedAPI.cc: id -1 is the caller); also its primary group's id.
    pub async fn own_quota(&self) -> Result<(QuotaHolder, i64), OneError> {
        const M: &str = "one.user.info";
        let doc = self
            .call_document(M, vec![(-1).into(), false.into()])
            .await?;
        QuotaHolder::from_user(&doc).map_err(|m| self.decode_error(M, m))
    }

    /// `one.group.info`: group `gid` with its VM quota and the default group quotas.
    pub async fn group_quota(&self, gid: i64) -> Result<QuotaHolder, OneError> {
        const M: &str = "one.group.info";
        let doc = self
            .call_document(M, vec![Value::Int(gid), false.into()])
            .await?;
        QuotaHolder::from_group(&doc).map_err(|m| self.decode_error(M, m))
    }

    /// `one.template.instantiate`: a new VM from `template_id` named `name`;
    /// returns its id.
    pub async fn instantiate(
        &self,
        template_id: u64,
        name: &str,
        extra: &ExtraTemplate,
    ) -> Result<u64, OneError> {
        self.call_id(
            "one.template.instantiate",
            vec![
                to_int(template_id),
                name.into(),
                false.into(),
                extra.render().into(),
                false.into(),
            ],
        )
        .await
    }

    /// `one.vm.info`: one VM.
    pub async fn vm(&self, id: u64) -> Result<VmInfo, OneError> {
        const M: &str = "one.vm.info";
        let doc = self
            .call_document(M, vec![to_int(id), false.into()])
            .await?;
        VmInfo::from_element(&doc).map_err(|m| self.decode_error(M, m))
    }

    /// `one.vmpool.info`: every VM the user may see that is not DONE.
    pub async fn vms(&self) -> Result<Vec<VmInfo>, OneError> {
        let pool = self
            .call_document(
                "one.vmpool.info",
                vec![
                    POOL_ALL.into(),
                    (-1).into(),
                    (-1).into(),
                    ANY_BUT_DONE.into(),
                ],
            )
            .await?;
        Ok(vms_from_pool(&pool))
    }

    /// `one.vm.action terminate` (the action comes before the id).
    pub async fn terminate(&self, id: u64) -> Result<(), OneError> {
        self.call_id("one.vm.action", vec!["terminate".into(), to_int(id)])
            .await
            .map(|_| ())
    }
}

fn to_int(id: u64) -> Value {
    Value::Int(i64::try_from(id).unwrap_or(i64::MAX))
}

/// A server echoing the session string must not put the password in our errors.
fn scrub(message: &str, password: &str) -> String {
    if password.len() >= 3 {
        message.replace(password, "<redacted>")
    } else {
        message.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_hides_echoed_password() {
        assert_eq!(
            scrub("bad session alice:hunter2", "hunter2"),
            "bad session alice:<redacted>"
        );
    }

    #[test]
    fn debug_hides_password() {
        let c = OneClient::new(
            "lab",
            "http://127.0.0.1:1/RPC2",
            Credentials::new("alice", "hunter2"),
            Duration::from_secs(1),
        )
        .unwrap();
        let text = format!("{c:?}");
        assert!(
            text.contains("alice") && !text.contains("hunter2"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn unreachable_endpoint_names_provider() {
        // Port 1 on loopback: nothing listens there.
        let c = OneClient::new(
            "lab",
            "http://127.0.0.1:1/RPC2",
            Credentials::new("alice", "pw"),
            Duration::from_secs(2),
        )
        .unwrap();
        let err = c.version().await.unwrap_err().to_string();
        assert!(
            err.contains("provider lab (http://127.0.0.1:1/RPC2)"),
            "{err}"
        );
        assert!(err.contains("cannot reach"), "{err}");
    }
}
