//! Typed errors of the Talos client. Every message names the node, endpoint or
//! context it is about, so an operator can tell which machine to look at.
use std::time::Duration;

use thiserror::Error;

use super::tls::TlsError;

#[derive(Debug, Clone, Error)]
pub enum TalosError {
    /// The node did not answer: the endpoint could not reach it, or it is down.
    #[error("node {node} is unreachable: {reason}")]
    Unreachable { node: String, reason: String },
    /// The call did not finish within the per-call timeout.
    #[error("node {node}: {call} timed out after {after:?}")]
    Timeout {
        node: String,
        call: &'static str,
        after: Duration,
    },
    /// The client certificate's role may not make this call.
    #[error(
        "node {node}: {call} refused: permission denied ({message}); this needs a role with more rights than the talosconfig context has"
    )]
    PermissionDenied {
        node: String,
        call: &'static str,
        message: String,
    },
    /// Certificates of the talosconfig context: unparsable, expired, or refused in the handshake.
    #[error("context {context:?}: TLS: {reason}")]
    Tls { context: String, reason: String },
    /// The context lists no endpoints to dial.
    #[error("context {context:?} has no endpoints; add some with talosctl config endpoint")]
    NoEndpoints { context: String },
    /// None of the context's endpoints accepted a connection.
    #[error("context {context:?}: no endpoint reachable (tried {endpoints}): {reason}")]
    EndpointsUnreachable {
        context: String,
        endpoints: String,
        reason: String,
    },
    /// Any other gRPC error the node (or the proxy in front of it) returned.
    #[error("node {node}: {call} failed: {code:?}: {message}")]
    Rpc {
        node: String,
        call: &'static str,
        code: tonic::Code,
        message: String,
    },
    /// The reply could not be understood.
    #[error("node {node}: {call}: unexpected reply: {reason}")]
    Decode {
        node: String,
        call: &'static str,
        reason: String,
    },
}

impl TalosError {
    /// The node the error is about, when it is about one node.
    pub fn node(&self) -> Option<&str> {
        match self {
            TalosError::Unreachable { node, .. }
            | TalosError::Timeout { node, .. }
            | TalosError::PermissionDenied { node, .. }
            | TalosError::Rpc { node, .. }
            | TalosError::Decode { node, .. } => Some(node),
            TalosError::Tls { .. }
            | TalosError::NoEndpoints { .. }
            | TalosError::EndpointsUnreachable { .. } => None,
        }
    }

    /// True when the node did not answer at all (down, unreachable, timed out),
    /// as opposed to answering with an error.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            TalosError::Unreachable { .. }
                | TalosError::Timeout { .. }
                | TalosError::EndpointsUnreachable { .. }
                | TalosError::NoEndpoints { .. }
                | TalosError::Tls { .. }
        )
    }

    pub(crate) fn from_tls(err: TlsError) -> Self {
        TalosError::Tls {
            context: err.context().to_string(),
            reason: err.reason(),
        }
    }

    /// Maps a status the server (or proxy) sent for a call to one node.
    pub(crate) fn from_status(node: &str, call: &'static str, status: &tonic::Status) -> Self {
        let message = status.message().to_string();
        match status.code() {
            tonic::Code::Unavailable => TalosError::Unreachable {
                node: node.to_string(),
                reason: message,
            },
            tonic::Code::DeadlineExceeded => TalosError::Rpc {
                node: node.to_string(),
                call,
                code: tonic::Code::DeadlineExceeded,
                message,
            },
            tonic::Code::PermissionDenied => TalosError::PermissionDenied {
                node: node.to_string(),
                call,
                message,
            },
            code => TalosError::Rpc {
                node: node.to_string(),
                call,
                code,
                message,
            },
        }
    }

    /// Maps a per-node `common.Metadata` error (one-to-many proxy answers).
    pub(crate) fn from_metadata(
        node: &str,
        call: &'static str,
        error: &str,
        status: Option<&crate::proto::google::rpc::Status>,
    ) -> Self {
        let code = status
            .map(|s| tonic::Code::from_i32(s.code))
            .unwrap_or(tonic::Code::Unknown);
        TalosError::from_status(node, call, &tonic::Status::new(code, error.to_string()))
    }
}
