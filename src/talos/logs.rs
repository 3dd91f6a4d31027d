//! `MachineService.Logs` and `Dmesg`: a service's, a container's or the kernel's log of one
//! node as a stream of printable lines. The node sends chunks that may cut a line anywhere;
//! [`LineSplitter`] joins them back, bounding how much of one line it keeps; [`LogLevel`] is
//! the severity a line states in the formats the nodes write.
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::calls::{machine, to_status};
use super::client::{Retry, TalosClient};
use super::error::TalosError;
use crate::proto::common;
use crate::proto::machine as pb;

/// The longest log line kept whole; the rest of a longer line is dropped, and the line says so.
pub const MAX_LINE_BYTES: usize = 8 * 1024;
/// What a line cut at [`MAX_LINE_BYTES`] ends with.
pub const CUT_MARK: &str = " [line cut]";

/// Which log of a node to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogSource {
    /// A Talos service (`etcd`, `kubelet`, `apid`, `machined`…): containerd's `system` namespace.
    Service(String),
    /// A Kubernetes container, `namespace/pod:container`: the CRI's `k8s.io` namespace, as
    /// `talosctl logs -k` asks for it.
    Container(String),
    /// The kernel log (`Dmesg`).
    Kernel,
}

impl LogSource {
    /// The log `id` names: a Kubernetes container (`namespace/pod:container`) when
    /// `kubernetes` is set, as `talosctl logs -k`, else a Talos service.
    pub fn requested(id: &str, kubernetes: bool) -> LogSource {
        if kubernetes {
            LogSource::Container(id.to_string())
        } else {
            LogSource::Service(id.to_string())
        }
    }

    /// The container of a control plane's static pod (`kube-apiserver`...) on the node whose
    /// hostname is `node`: Talos names the pod `<component>-<hostname>` in `kube-system`.
    pub fn static_pod(component: &str, node: &str) -> LogSource {
        LogSource::Container(format!("kube-system/{component}-{node}:{component}"))
    }

    /// How the source reads in messages: the service or container id, or `kernel`.
    pub fn name(&self) -> &str {
        match self {
            LogSource::Service(id) | LogSource::Container(id) => id,
            LogSource::Kernel => "kernel",
        }
    }
}

/// How much to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// Only the last `n` lines (services and containers); `None` reads the whole log. The
    /// kernel log has no tail: `Some(0)` reads only what comes next, else the whole log.
    pub tail: Option<u32>,
    /// Keep the stream open and receive new lines as they are written.
    pub follow: bool,
}

/// One line of a node's log, control characters made printable, without its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub node: String,
    pub text: String,
}

/// The severity a log line states, in the forms the nodes write: zap and slog JSON
/// (`"level":"warn"`), logfmt (`level=error`) and klog's header letter (`E1206 10:00:00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
}

impl LogLevel {
    fn named(word: &str) -> Option<LogLevel> {
        match word.to_ascii_lowercase().as_str() {
            "error" | "err" | "fatal" | "panic" | "dpanic" | "critical" | "crit" | "alert"
            | "emerg" => Some(LogLevel::Error),
            "warn" | "warning" => Some(LogLevel::Warn),
            "info" | "notice" => Some(LogLevel::Info),
            "debug" | "trace" => Some(LogLevel::Debug),
            _ => None,
        }
    }

    /// The level `line` states, if any; a kernel line (`kern: warning: [...]`, as Talos's
    /// Dmesg formats facility and priority) by its second word.
    pub fn of(line: &str) -> Option<LogLevel> {
        let mut words = line.splitn(3, ':');
        if let (Some(facility), Some(priority), Some(_)) =
            (words.next(), words.next(), words.next())
            && matches!(
                facility.trim(),
                "kern" | "user" | "daemon" | "syslog" | "auth"
            )
        {
            return LogLevel::named(priority.trim());
        }
        for key in ["\"level\":\"", "\"severity\":\"", "level="] {
            if let Some(at) = line.find(key) {
                let rest = &line[at + key.len()..];
                let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
                if let Some(level) = LogLevel::named(&word) {
                    return Some(level);
                }
            }
        }
        let mut chars = line.chars();
        let letter = chars.next()?;
        let digits = chars.by_ref().take(4).filter(char::is_ascii_digit).count();
        if digits == 4 && chars.next() == Some(' ') {
            return match letter {
                'E' | 'F' => Some(LogLevel::Error),
                'W' => Some(LogLevel::Warn),
                'I' => Some(LogLevel::Info),
                _ => None,
            };
        }
        None
    }
}

/// Joins chunks into lines; a line is kept up to [`MAX_LINE_BYTES`], so the bytes it holds
/// between two newlines stay bounded whatever the node sends.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
    /// The current line was cut: drop its bytes until the next newline.
    cutting: bool,
}

impl LineSplitter {
    /// The lines `chunk` completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        for piece in chunk.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if !self.cutting {
                let room = MAX_LINE_BYTES - self.partial.len();
                if body.len() > room {
                    self.partial.extend_from_slice(&body[..room]);
                    lines.push(format!("{}{CUT_MARK}", self.take()));
                    self.cutting = true;
                } else {
                    self.partial.extend_from_slice(body);
                }
            }
            if ends {
                if self.cutting {
                    self.cutting = false;
                } else {
                    lines.push(self.take());
                }
            }
        }
        lines
    }

    /// A last line the log did not end with a newline.
    pub fn finish(mut self) -> Option<String> {
        (!self.partial.is_empty() && !self.cutting).then(|| self.take())
    }

    fn take(&mut self) -> String {
        let line = crate::printable::line(&String::from_utf8_lossy(&self.partial));
        self.partial.clear();
        line
    }
}

const LOGS_CALL: &str = "Logs";
const DMESG_CALL: &str = "Dmesg";

impl TalosClient {
    /// Opens one node's log. Without `follow` the stream ends with the log, and each chunk
    /// must come within the call timeout; following, it ends when the node closes it.
    pub async fn logs(
        &self,
        node: &str,
        source: &LogSource,
        options: LogOptions,
    ) -> Result<BoxStream<'static, Result<LogLine, TalosError>>, TalosError> {
        let (call, chunks) = match source {
            LogSource::Kernel => (DMESG_CALL, self.open_dmesg(node, options).await?),
            LogSource::Service(id) => {
                let req = logs_request("system", id, common::ContainerDriver::Containerd, options);
                (LOGS_CALL, self.open_logs(node, req).await?)
            }
            LogSource::Container(id) => {
                let req = logs_request("k8s.io", id, common::ContainerDriver::Cri, options);
                (LOGS_CALL, self.open_logs(node, req).await?)
            }
        };
        let idle = (!options.follow).then_some(self.options().call_timeout);
        Ok(lines_of(node, call, chunks, idle))
    }

    async fn open_logs(
        &self,
        node: &str,
        req: pb::LogsRequest,
    ) -> Result<tonic::Streaming<common::Data>, TalosError> {
        self.open_stream(node, LOGS_CALL, Retry::Idempotent, |ch| {
            let req = req.clone();
            async move {
                machine(ch)
                    .logs(
                        self.request(node, LOGS_CALL, req, None)
                            .map_err(to_status)?,
                    )
                    .await
            }
        })
        .await
    }

    async fn open_dmesg(
        &self,
        node: &str,
        options: LogOptions,
    ) -> Result<tonic::Streaming<common::Data>, TalosError> {
        let req = pb::DmesgRequest {
            follow: options.follow,
            tail: options.tail == Some(0),
        };
        self.open_stream(node, DMESG_CALL, Retry::Idempotent, |ch| async move {
            let req = self
                .request(node, DMESG_CALL, req, None)
                .map_err(to_status)?;
            machine(ch).dmesg(req).await
        })
        .await
    }
}

/// talosctl's `logs` request: `tail_lines` -1 reads the whole log.
fn logs_request(
    namespace: &str,
    id: &str,
    driver: common::ContainerDriver,
    options: LogOptions,
) -> pb::LogsRequest {
    pb::LogsRequest {
        namespace: namespace.to_string(),
        id: id.to_string(),
        driver: driver as i32,
        follow: options.follow,
        tail_lines: options.tail.map_or(-1, |n| n.min(i32::MAX as u32) as i32),
    }
}

/// What reading the next chunk gave.
enum Chunk {
    Bytes(Vec<u8>),
    Failed(TalosError),
    End,
}

/// The chunks of `stream` as lines of `node`; with `idle`, a chunk that does not come in time
/// ends the stream with a timeout.
fn lines_of(
    node: &str,
    call: &'static str,
    stream: tonic::Streaming<common::Data>,
    idle: Option<Duration>,
) -> BoxStream<'static, Result<LogLine, TalosError>> {
    let node = node.to_string();
    let state = (stream, LineSplitter::default(), false);
    futures::stream::unfold(state, move |(mut stream, mut splitter, done)| {
        let node = node.clone();
        async move {
            if done {
                return None;
            }
            let chunk = next_chunk(&node, call, &mut stream, idle).await;
            let (items, done): (Vec<Result<LogLine, TalosError>>, bool) = match chunk {
                Chunk::Bytes(bytes) => (
                    splitter
                        .push(&bytes)
                        .into_iter()
                        .map(|text| Ok(line(&node, text)))
                        .collect(),
                    false,
                ),
                Chunk::Failed(e) => (vec![Err(e)], true),
                Chunk::End => {
                    let last = std::mem::take(&mut splitter).finish();
                    (last.map(|t| Ok(line(&node, t))).into_iter().collect(), true)
                }
            };
            Some((futures::stream::iter(items), (stream, splitter, done)))
        }
    })
    .flatten()
    .boxed()
}

fn line(node: &str, text: String) -> LogLine {
    LogLine {
        node: node.to_string(),
        text,
    }
}

async fn next_chunk(
    node: &str,
    call: &'static str,
    stream: &mut tonic::Streaming<common::Data>,
    idle: Option<Duration>,
) -> Chunk {
    let next = match idle {
        Some(after) => match tokio::time::timeout(after, stream.next()).await {
            Ok(next) => next,
            Err(_) => {
                return Chunk::Failed(TalosError::Timeout {
                    node: node.to_string(),
                    call,
                    after,
                });
            }
        },
        None => stream.next().await,
    };
    match next {
        None => Chunk::End,
        Some(Err(status)) => Chunk::Failed(TalosError::from_status(node, call, &status)),
        Some(Ok(data)) => match data.metadata.filter(|md| !md.error.is_empty()) {
            Some(md) => Chunk::Failed(TalosError::from_metadata(
                node,
                call,
                &md.error,
                md.status.as_ref(),
            )),
            None => Chunk::Bytes(data.bytes),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_mid_line_are_joined() {
        let mut s = LineSplitter::default();
        assert_eq!(s.push(b"one\ntw"), vec!["one"]);
        assert_eq!(s.push(b"o\nthr"), vec!["two"]);
        assert_eq!(s.finish().as_deref(), Some("thr"));
    }

    #[test]
    fn an_overlong_line_is_cut_and_its_rest_dropped() {
        let mut s = LineSplitter::default();
        let long = vec![b'x'; MAX_LINE_BYTES + 100];
        let lines = s.push(&long);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].len(), MAX_LINE_BYTES + CUT_MARK.len());
        assert!(s.push(&[b'y'; 5000]).is_empty(), "the rest is dropped");
        assert_eq!(s.push(b"yy\nnext\n"), vec!["next"]);
        assert_eq!(s.partial.len(), 0);
    }

    #[test]
    fn control_characters_are_made_printable() {
        let mut s = LineSplitter::default();
        assert_eq!(s.push(b"a\x1b[2Jb\r\n"), vec!["a?[2Jb?"]);
    }

    #[test]
    fn levels_are_read_from_json_logfmt_and_klog_lines() {
        let zap = r#"{"level":"warn","ts":"2026-12-01T19:50:00Z","msg":"slow"}"#;
        assert_eq!(LogLevel::of(zap), Some(LogLevel::Warn));
        let slog = r#"{"time":"x","severity":"ERROR","msg":"boom"}"#;
        assert_eq!(LogLevel::of(slog), Some(LogLevel::Error));
        assert_eq!(
            LogLevel::of("time=x level=debug msg=y"),
            Some(LogLevel::Debug)
        );
        let klog = "E1206 10:00:00.000000       1 controller.go:113] sync failed";
        assert_eq!(LogLevel::of(klog), Some(LogLevel::Error));
        assert_eq!(
            LogLevel::of("I1206 10:00:00.0 1 x.go:1] ok"),
            Some(LogLevel::Info)
        );
        assert_eq!(LogLevel::of("Everything fine"), None);
        let kernel = "kern: warning: [2026-12-01T19:40:01.5Z]: ACPI: no IRQ";
        assert_eq!(LogLevel::of(kernel), Some(LogLevel::Warn));
        assert_eq!(
            LogLevel::of("kern:    info: [x]: Linux"),
            Some(LogLevel::Info)
        );
        assert_eq!(LogLevel::of("[talos] service[etcd](Running)"), None);
    }
}
