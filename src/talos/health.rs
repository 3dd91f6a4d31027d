//! `cluster.ClusterService/HealthCheck`: the server-side `talosctl health`, asked of one node,
//! as a stream of typed progress: the nodes it discovered, then each check's state as it
//! changes ("waiting for etcd to be healthy: OK").
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::calls::to_status;
use super::client::{MAX_MESSAGE_SIZE, Retry, TalosClient};
use super::error::TalosError;
use crate::proto::cluster::{self as pb, cluster_service_client::ClusterServiceClient};

/// The longest progress message kept whole (a failing check lists one error per node).
const MAX_MESSAGE_BYTES: usize = 16 * 1024;

/// Where one check stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckState {
    /// Not decided yet (`...`).
    Waiting,
    /// `OK`.
    Passed,
    /// The check's last error, as the node words it.
    Failing(String),
}

/// One message of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthProgress {
    /// `discovered nodes: ["10.5.0.2" ...]`: the node addresses the checks ask.
    Discovered(Vec<String>),
    /// `waiting for <check>: <state>`.
    Check { name: String, state: CheckState },
    /// Any other line, kept as it came (printable).
    Note(String),
}

impl HealthProgress {
    /// Reads one progress message (pkg/cluster/check/reporter.go and
    /// internal/app/machined/internal/server/v1alpha1/v1alpha1_cluster.go word them).
    pub fn parse(message: &str) -> HealthProgress {
        let mut text = crate::printable::lines(message);
        if text.len() > MAX_MESSAGE_BYTES {
            let mut cut = MAX_MESSAGE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        if let Some(list) = text.strip_prefix("discovered nodes: ") {
            let nodes = list
                .trim_matches(|c| c == '[' || c == ']')
                .split_whitespace()
                .map(|n| n.trim_matches('"').to_string())
                .collect();
            return HealthProgress::Discovered(nodes);
        }
        let Some((name, state)) = text
            .strip_prefix("waiting for ")
            .and_then(|rest| rest.split_once(": "))
        else {
            return HealthProgress::Note(text);
        };
        let state = match state.trim() {
            "..." => CheckState::Waiting,
            "OK" => CheckState::Passed,
            other => CheckState::Failing(other.to_string()),
        };
        HealthProgress::Check {
            name: name.to_string(),
            state,
        }
    }
}

const CALL: &str = "HealthCheck";

impl TalosClient {
    /// Runs the cluster's health checks on `node`, each polled until it passes, for at most
    /// `wait`; the stream then ends with the node's deadline error. The reader role suffices.
    pub async fn health_check(
        &self,
        node: &str,
        wait: Duration,
    ) -> Result<BoxStream<'static, Result<HealthProgress, TalosError>>, TalosError> {
        let req = pb::HealthCheckRequest {
            wait_timeout: prost_types::Duration::try_from(wait).ok(),
            cluster_info: None,
        };
        let stream = self
            .open_stream(node, CALL, Retry::Idempotent, |ch| {
                let req = req.clone();
                async move {
                    ClusterServiceClient::new(ch)
                        .max_decoding_message_size(MAX_MESSAGE_SIZE)
                        .health_check(self.request(node, CALL, req, None).map_err(to_status)?)
                        .await
                }
            })
            .await?;
        let node = node.to_string();
        Ok(stream
            .map(move |item| match item {
                Ok(progress) => Ok(HealthProgress::parse(&progress.message)),
                Err(status) => Err(TalosError::from_status(&node, CALL, &status)),
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_read() {
        assert_eq!(
            HealthProgress::parse(r#"discovered nodes: ["10.5.0.2" "10.5.0.3"]"#),
            HealthProgress::Discovered(vec!["10.5.0.2".into(), "10.5.0.3".into()])
        );
        assert_eq!(
            HealthProgress::parse("waiting for etcd to be healthy: OK"),
            HealthProgress::Check {
                name: "etcd to be healthy".into(),
                state: CheckState::Passed
            }
        );
        assert_eq!(
            HealthProgress::parse("waiting for apid to be ready: ..."),
            HealthProgress::Check {
                name: "apid to be ready".into(),
                state: CheckState::Waiting
            }
        );
        let failing = HealthProgress::parse(
            "waiting for etcd to be healthy: 1 error occurred:\n\t* 10.5.0.3: service is not healthy: etcd",
        );
        assert_eq!(
            failing,
            HealthProgress::Check {
                name: "etcd to be healthy".into(),
                state: CheckState::Failing(
                    "1 error occurred:\n * 10.5.0.3: service is not healthy: etcd".into()
                )
            }
        );
    }
}
