//! Typed errors of the OpenNebula clients (XML-RPC and OneFlow). Every message
//! names the provider and its endpoint, says what went wrong in OpenNebula's
//! terms and, where there is one, what to do about it.
use std::fmt;
use std::path::PathBuf;

/// Which provider and endpoint a call went to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub provider: String,
    pub endpoint: String,
}

impl Origin {
    pub fn new(provider: &str, endpoint: &str) -> Origin {
        Origin {
            provider: provider.to_string(),
            endpoint: endpoint.to_string(),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "provider {} ({})", self.provider, self.endpoint)
    }
}

/// OpenNebula's error codes (`include/Request.h`), by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Authentication,
    Authorization,
    NoSuchObject,
    ActionNotAllowed,
    BadParameters,
    Internal,
    Allocate,
    Locked,
    Other(i64),
}

impl FailureKind {
    pub fn from_code(code: i64) -> FailureKind {
        match code {
            0x100 => FailureKind::Authentication,
            0x200 => FailureKind::Authorization,
            0x400 => FailureKind::NoSuchObject,
            0x800 => FailureKind::ActionNotAllowed,
            0x1000 => FailureKind::BadParameters,
            0x2000 => FailureKind::Internal,
            0x4000 => FailureKind::Allocate,
            0x8000 => FailureKind::Locked,
            other => FailureKind::Other(other),
        }
    }

    /// From a OneFlow HTTP status.
    pub fn from_http(status: u16) -> FailureKind {
        match status {
            401 => FailureKind::Authentication,
            403 => FailureKind::Authorization,
            404 => FailureKind::NoSuchObject,
            400 | 405 | 409 => FailureKind::ActionNotAllowed,
            500..=599 => FailureKind::Internal,
            other => FailureKind::Other(i64::from(other)),
        }
    }

    fn explain(self) -> String {
        match self {
            FailureKind::Authentication => {
                "authentication failed: check the user and password (auth_file, username/password in the config, or ONE_AUTH)".into()
            }
            FailureKind::Authorization => "not authorized for this action".into(),
            FailureKind::NoSuchObject => "no such object".into(),
            FailureKind::ActionNotAllowed => "action not allowed in the object's current state".into(),
            FailureKind::BadParameters => "the call's parameters were refused".into(),
            FailureKind::Internal => "internal OpenNebula error".into(),
            FailureKind::Allocate => "the resource could not be allocated".into(),
            FailureKind::Locked => "the object is locked".into(),
            FailureKind::Other(code) => format!("error code {code}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OneError {
    /// OpenNebula answered and said no.
    #[error("{at}: {call}: {}: {message}", kind.explain())]
    Failed {
        at: Origin,
        call: String,
        kind: FailureKind,
        message: String,
    },
    /// The endpoint could not be reached, or answered outside the protocol
    /// (HTTP error, XML-RPC fault).
    #[error("{at}: {call}: {message}")]
    Transport {
        at: Origin,
        call: String,
        message: String,
    },
    /// The answer did not have the shape the protocol promises.
    #[error("{at}: {call}: unexpected answer: {message}")]
    Decode {
        at: Origin,
        call: String,
        message: String,
    },
    /// A template or service named in the config does not exist.
    #[error("{at}: no {what} named {name:?}; {hint}")]
    NotFound {
        at: Origin,
        what: &'static str,
        name: String,
        hint: String,
    },
    /// Credentials could not be found or read.
    #[error("provider {provider}: credentials: {}: {message}", path.display())]
    Credentials {
        provider: String,
        path: PathBuf,
        message: String,
    },
    /// The provider's endpoint is not a usable URL.
    #[error("provider {provider}: endpoint {endpoint:?} is not an http(s) URL")]
    Endpoint { provider: String, endpoint: String },
    /// A OneFlow provider without an XML-RPC endpoint: OneFlow's service document names a
    /// role's VMs but carries neither their state nor their IPs (OpenNebula/one
    /// src/flow/lib/models/role.rb keeps ID, UID, GID, UNAME, GNAME and NAME in `vm_info`).
    #[error(
        "provider {provider}: a OneFlow provider needs an XML-RPC endpoint to follow its VMs \
         (OneFlow's service document carries no VM state or IP; they are read with one.vm.info): \
         set xmlrpc_endpoint: (http://HOST:2633/RPC2) under providers: {provider}: in taloscope.yaml, \
         or ONE_XMLRPC"
    )]
    NoXmlRpcEndpoint { provider: String },
}

impl OneError {
    /// The failure kind, when OpenNebula gave one.
    pub fn kind(&self) -> Option<FailureKind> {
        match self {
            OneError::Failed { kind, .. } => Some(*kind),
            OneError::NotFound { .. } => Some(FailureKind::NoSuchObject),
            _ => None,
        }
    }
}

/// The whole source chain of a reqwest error (none carries secrets here).
pub(crate) use crate::error_chain as chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_provider_endpoint_and_kind() {
        let e = OneError::Failed {
            at: Origin {
                provider: "lab".into(),
                endpoint: "http://127.0.0.1:2633/RPC2".into(),
            },
            call: "one.vm.info".into(),
            kind: FailureKind::from_code(256),
            message: "User couldn't be authenticated".into(),
        };
        let text = e.to_string();
        assert!(
            text.contains("provider lab (http://127.0.0.1:2633/RPC2)"),
            "{text}"
        );
        assert!(text.contains("authentication failed"), "{text}");
        assert_eq!(FailureKind::from_code(1024), FailureKind::NoSuchObject);
        assert_eq!(FailureKind::from_code(2048), FailureKind::ActionNotAllowed);
        assert_eq!(FailureKind::from_http(401), FailureKind::Authentication);
    }
}
