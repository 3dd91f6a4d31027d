//! The calls that make a new cluster of configured nodes: `Bootstrap` on the first control
//! plane (once: etcd is started from it) and the admin kubeconfig as Talos streams it (a
//! .tar.gz of one file, in `common.Data` chunks), read to a bounded size.
use std::time::Duration;

use futures::StreamExt;

use super::calls::{machine, to_status};
use super::client::{Retry, TalosClient, node_message};
use super::error::TalosError;
use crate::proto::machine as pb;

/// The most a kubeconfig archive may hold: a kubeconfig is a few kilobytes (three PEM
/// blocks); anything near this is not one.
pub const MAX_KUBECONFIG_BYTES: usize = 1024 * 1024;
/// Bound on reading the whole kubeconfig stream.
pub const KUBECONFIG_READ_BOUND: Duration = Duration::from_secs(60);

impl TalosClient {
    /// Bootstraps etcd on `node` (upstream `MachineService.Bootstrap`). Talos refuses a second
    /// bootstrap of a member that has etcd data; the caller records that it sent it before it
    /// does, so a run killed here never sends it twice. Never retried once sent.
    pub async fn bootstrap(&self, node: &str) -> Result<(), TalosError> {
        const CALL: &str = "Bootstrap";
        let t = Some(self.options().call_timeout);
        let resp = self
            .call(node, CALL, Retry::OnlyIfNotSent, |ch| async move {
                let req = pb::BootstrapRequest::default();
                machine(ch)
                    .bootstrap(self.request(node, CALL, req, t).map_err(to_status)?)
                    .await
            })
            .await?;
        node_message(node, CALL, resp.messages, |m| m.metadata.as_ref()).map(|_| ())
    }

    /// The admin kubeconfig of the cluster, as the .tar.gz `node` streams (upstream
    /// `MachineService.Kubeconfig`); at most [`MAX_KUBECONFIG_BYTES`], read within
    /// [`KUBECONFIG_READ_BOUND`].
    pub async fn kubeconfig(&self, node: &str) -> Result<Vec<u8>, TalosError> {
        const CALL: &str = "Kubeconfig";
        let read = async {
            let mut stream = self
                .open_stream(node, CALL, Retry::Idempotent, |ch| async move {
                    machine(ch)
                        .kubeconfig(self.request(node, CALL, (), None).map_err(to_status)?)
                        .await
                })
                .await?;
            let mut bytes = Vec::new();
            while let Some(item) = stream.next().await {
                let data = item.map_err(|s| TalosError::from_status(node, CALL, &s))?;
                if let Some(md) = data.metadata.filter(|md| !md.error.is_empty()) {
                    return Err(TalosError::from_metadata(
                        node,
                        CALL,
                        &md.error,
                        md.status.as_ref(),
                    ));
                }
                append_bounded(&mut bytes, &data.bytes).map_err(|reason| TalosError::Decode {
                    node: node.to_string(),
                    call: CALL,
                    reason,
                })?;
            }
            Ok(bytes)
        };
        tokio::time::timeout(KUBECONFIG_READ_BOUND, read)
            .await
            .map_err(|_| TalosError::Timeout {
                node: node.to_string(),
                call: CALL,
                after: KUBECONFIG_READ_BOUND,
            })?
    }
}

/// Appends a chunk, refusing to pass [`MAX_KUBECONFIG_BYTES`] in all.
fn append_bounded(bytes: &mut Vec<u8>, chunk: &[u8]) -> Result<(), String> {
    if bytes.len() + chunk.len() > MAX_KUBECONFIG_BYTES {
        return Err(format!(
            "the kubeconfig stream passed {MAX_KUBECONFIG_BYTES} bytes; a kubeconfig is a few kilobytes"
        ));
    }
    bytes.extend_from_slice(chunk);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_is_read_up_to_its_bound_only() {
        let mut bytes = Vec::new();
        append_bounded(&mut bytes, &[1; 1000]).unwrap();
        append_bounded(&mut bytes, &vec![2; MAX_KUBECONFIG_BYTES - 1000]).unwrap();
        let err = append_bounded(&mut bytes, &[3]).unwrap_err();
        assert!(err.contains("passed 1048576 bytes"), "{err}");
        assert_eq!(bytes.len(), MAX_KUBECONFIG_BYTES);
    }
}
