//! `MachineService.Read`: a file's bytes from one node, streamed in chunks and bounded in size.
//! The upgrade runner reads the boot id with it, as talosctl does around a reboot.
use futures::StreamExt;

use super::calls::{machine, to_status};
use super::client::{Retry, TalosClient};
use super::error::TalosError;
use crate::proto::machine as pb;

/// The kernel's id of the current boot; it changes on every boot, kexec included.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";
/// The most `read_file` accepts: enough for any file under /proc or /etc an operator reads.
pub const MAX_READ_BYTES: usize = 1024 * 1024;

impl TalosClient {
    /// The bytes of `path` on `node` (needs os:admin). A file larger than [`MAX_READ_BYTES`]
    /// is refused rather than truncated; the whole read is bound by the call timeout.
    pub async fn read_file(&self, node: &str, path: &str) -> Result<Vec<u8>, TalosError> {
        const CALL: &str = "Read";
        let timeout = self.options().call_timeout;
        let req = pb::ReadRequest {
            path: path.to_string(),
        };
        let read = async {
            let mut stream = self
                .call(node, CALL, Retry::Idempotent, |ch| {
                    let req = req.clone();
                    async move {
                        machine(ch)
                            .read(self.request(node, CALL, req, None).map_err(to_status)?)
                            .await
                    }
                })
                .await?;
            let mut bytes = Vec::new();
            while let Some(item) = stream.next().await {
                let data = item.map_err(|status| TalosError::from_status(node, CALL, &status))?;
                super::client::metadata_error(node, CALL, data.metadata.as_ref())?;
                if bytes.len() + data.bytes.len() > MAX_READ_BYTES {
                    return Err(TalosError::Decode {
                        node: node.to_string(),
                        call: CALL,
                        reason: format!("{path} is larger than {MAX_READ_BYTES} bytes"),
                    });
                }
                bytes.extend_from_slice(&data.bytes);
            }
            Ok(bytes)
        };
        super::client::whole_read_within(node, CALL, timeout, read).await
    }

    /// The node's current boot id, trimmed.
    pub async fn boot_id(&self, node: &str) -> Result<String, TalosError> {
        let bytes = self.read_file(node, BOOT_ID_PATH).await?;
        Ok(String::from_utf8_lossy(&bytes).trim().to_string())
    }
}
