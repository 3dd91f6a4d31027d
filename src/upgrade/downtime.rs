//! The downtime a rollout expects, in the operator's words: a node that reboots stops
//! answering on its Talos API, and a control plane whose API server restarts (or whose node
//! reboots) takes the Kubernetes API with it. Said as a sentence with the transport's reason
//! in a few words, not as the raw transport error.

/// The Talos API of a rebooting node that does not answer yet.
pub fn talos_api_down(error: &str) -> String {
    format!(
        "its Talos API is not answering yet ({}): expected while the node reboots",
        reason(error)
    )
}

/// The Kubernetes API that does not answer while a control plane restarts.
pub fn kubernetes_api_down(error: &str) -> String {
    format!(
        "the Kubernetes API is not answering yet ({}): expected while a control plane restarts",
        reason(error)
    )
}

/// The transport's reason in a few words: a known cause by name, else the innermost part of
/// the error chain (after its last `": "`).
fn reason(error: &str) -> String {
    let lower = error.to_ascii_lowercase();
    const KNOWN: [(&str, &str); 8] = [
        ("connection refused", "connection refused"),
        ("connection reset", "connection reset"),
        ("broken pipe", "connection dropped"),
        ("no route to host", "no route to host"),
        ("network is unreachable", "network unreachable"),
        ("timed out", "timed out"),
        ("deadline", "timed out"),
        ("unexpected eof", "connection dropped"),
    ];
    if let Some((_, said)) = KNOWN.iter().find(|(seen, _)| lower.contains(seen)) {
        return (*said).to_string();
    }
    let innermost = error.rsplit(": ").next().unwrap_or(error).trim();
    crate::printable::line(innermost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transport_error_becomes_a_sentence() {
        let raw = "node cp-1 is unreachable: transport error: tcp connect error: Connection refused (os error 111)";
        assert_eq!(
            talos_api_down(raw),
            "its Talos API is not answering yet (connection refused): expected while the node reboots"
        );
        assert_eq!(
            kubernetes_api_down(
                "error trying to connect: tcp connect error: Connection reset by peer"
            ),
            "the Kubernetes API is not answering yet (connection reset): expected while a control plane restarts"
        );
        assert_eq!(
            talos_api_down("node w-2: handshake: certificate unknown"),
            "its Talos API is not answering yet (certificate unknown): expected while the node reboots"
        );
    }
}
