//! Certificate expiry of a cluster's credentials: the Talos API CA and client certificate of
//! each talosconfig context, and the Kubernetes client certificate of each kubeconfig context
//! (pure: the time is given, the certificates come from discovery's values); and of what its
//! servers present: each talosconfig endpoint's apid and the Kubernetes API server (one
//! bounded handshake each). A warning 30 days before the end, a failure 7 days before (and after).
use std::time::Duration;

use serde::Serialize;

use crate::discovery::{Cluster, parse_client_certificate};
use crate::talos::served_cert::served_certificate;

/// Days before the end at which a certificate is reported as a warning.
pub const WARN_DAYS: i64 = 30;
/// Days before the end at which a certificate is reported as a failure.
pub const FAIL_DAYS: i64 = 7;

/// How close a certificate is to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpiryVerdict {
    Ok,
    Warn,
    Fail,
}

/// One certificate of one context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CertExpiry {
    pub cluster: String,
    /// The talosconfig or kubeconfig context it belongs to.
    pub context: String,
    /// `talos CA`, `talos client`, `kubernetes client`, `apid server`, `kubernetes API server`.
    pub certificate: &'static str,
    /// Seconds since the epoch; `None` when it does not parse (see `error`).
    pub not_after: Option<i64>,
    /// Whole days left (negative once expired).
    pub days_left: Option<i64>,
    pub verdict: ExpiryVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The server that presented it (a talosconfig endpoint, the API server URL); absent
    /// for the certificates of the config files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// The verdict for a certificate ending at `not_after`, at `now` (seconds since the epoch).
pub fn verdict(not_after: i64, now: i64) -> ExpiryVerdict {
    let left = not_after - now;
    if left < FAIL_DAYS * 86_400 {
        ExpiryVerdict::Fail
    } else if left < WARN_DAYS * 86_400 {
        ExpiryVerdict::Warn
    } else {
        ExpiryVerdict::Ok
    }
}

fn entry(
    cluster: &str,
    context: &str,
    certificate: &'static str,
    pem: &str,
    now: i64,
) -> CertExpiry {
    let not_after = parse_client_certificate(pem).map(|c| c.not_after);
    ending(cluster, context, certificate, not_after, now)
}

/// A certificate ending at `not_after`, or why its end is unknown (a failure).
fn ending(
    cluster: &str,
    context: &str,
    certificate: &'static str,
    not_after: Result<i64, String>,
    now: i64,
) -> CertExpiry {
    let (not_after, days_left, verdict, error) = match not_after {
        Ok(at) => (
            Some(at),
            Some((at - now).div_euclid(86_400)),
            verdict(at, now),
            None,
        ),
        Err(e) => (None, None, ExpiryVerdict::Fail, Some(e)),
    };
    CertExpiry {
        cluster: cluster.to_string(),
        context: context.to_string(),
        certificate,
        not_after,
        days_left,
        verdict,
        error,
        endpoint: None,
    }
}

/// The certificates `cluster`'s servers present: the apid of each endpoint of its talosconfig
/// context in use, and the API server of its kubeconfig context in use; each read within
/// `within`, all at once. A server that cannot be reached is not a certificate's failure (the
/// status says it is down): it is left out, and why is in the second list.
pub async fn served_cert_expiry(
    cluster: &Cluster,
    within: Duration,
    now: i64,
) -> (Vec<CertExpiry>, Vec<String>) {
    let mut asked: Vec<(&str, &'static str, &str)> = Vec::new();
    if let Some(ctx) = &cluster.talos {
        asked.extend(
            ctx.endpoints
                .iter()
                .map(|e| (ctx.name.as_str(), "apid server", e.as_str())),
        );
    }
    if let Some((ctx, server)) = cluster
        .kube
        .as_ref()
        .and_then(|k| Some((k, k.server.as_ref()?)))
    {
        asked.push((ctx.name.as_str(), "kubernetes API server", server.as_str()));
    }
    let reads = asked
        .iter()
        .map(|(context, certificate, endpoint)| async move {
            let served = served_certificate(endpoint, within).await?;
            Ok(CertExpiry {
                endpoint: Some(endpoint.to_string()),
                ..ending(
                    &cluster.name,
                    context,
                    certificate,
                    Ok(served.not_after),
                    now,
                )
            })
        });
    let mut read = Vec::new();
    let mut unread = Vec::new();
    for result in futures::future::join_all(reads).await {
        match result {
            Ok(cert) => read.push(cert),
            Err(why) => unread.push(why),
        }
    }
    (read, unread)
}

/// A kubeconfig user's client certificate (PEM), if the kubeconfig gives it one; the
/// `kube_cert` of [`cluster_cert_expiry`] for the command and the poller alike.
pub fn kubeconfig_client_cert(
    kubeconfig: Option<&kube::config::Kubeconfig>,
    user: &str,
) -> Result<Option<String>, String> {
    let Some(kubeconfig) = kubeconfig else {
        return Ok(None);
    };
    crate::kube::client_certificate(kubeconfig, user)
        .map(|pem| pem.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
        .map_err(|e| format!("kubeconfig user {user:?}: {e}"))
}

/// What a certificate near or past its end means for the cluster, in the fleet's words:
/// `talos client cert (prod-expiring) expires in 9d`; `None` when it is far from its end.
pub fn expiry_problem(c: &CertExpiry) -> Option<String> {
    if c.verdict == ExpiryVerdict::Ok {
        return None;
    }
    let whose = c.endpoint.as_deref().unwrap_or(&c.context);
    let what = format!("{} cert ({whose})", c.certificate);
    Some(match (c.days_left, &c.error) {
        (_, Some(e)) => format!("{what} unreadable: {e}"),
        (Some(days), None) if days < 0 => format!("{what} expired {}d ago", -days),
        (Some(days), None) => format!("{what} expires in {days}d"),
        (None, None) => format!("{what} unreadable"),
    })
}

/// Soonest end first (unreadable ones first of all: nothing says they still work), then by
/// cluster, context and certificate, so the order never depends on the servers' timing.
pub fn soonest_first(certs: &mut [CertExpiry]) {
    certs.sort_by(|a, b| {
        let end = |c: &CertExpiry| (c.error.is_none(), c.not_after.unwrap_or(i64::MIN));
        end(a)
            .cmp(&end(b))
            .then_with(|| {
                (&a.cluster, &a.context, a.certificate).cmp(&(
                    &b.cluster,
                    &b.context,
                    b.certificate,
                ))
            })
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
}

/// Which certificate it is: `talos client`, or a served one with its server
/// (`apid server 10.5.0.2:50000`), as `taloscope certs` and the certificates screen name it.
pub fn certificate_text(c: &CertExpiry) -> String {
    match &c.endpoint {
        Some(endpoint) => format!("{} {endpoint}", c.certificate),
        None => c.certificate.to_string(),
    }
}

/// The day a readable certificate ends, `2026-12-11` (UTC).
pub fn end_date(c: &CertExpiry) -> Option<String> {
    let at = c.not_after.filter(|_| c.error.is_none())?;
    let (y, m, d) = crate::clock::civil_from_days(at.div_euclid(86_400));
    Some(format!("{y:04}-{m:02}-{d:02}"))
}

/// `2026-12-11 (in 9 days)`, `… (expired 3 days ago)`, or why the certificate is unreadable.
pub fn expires_text(c: &CertExpiry) -> String {
    match (end_date(c), c.days_left, &c.error) {
        (_, _, Some(e)) => format!("unreadable: {e}"),
        (Some(when), Some(days), None) => {
            if days < 0 {
                format!("{when} (expired {} days ago)", -days)
            } else {
                format!("{when} (in {days} days)")
            }
        }
        _ => String::new(),
    }
}

/// How to renew `c`, in talosctl's words. The CAs (ten years) are rotated by `talosctl
/// rotate-ca` (siderolabs/talos cmd/talosctl/cmd/talos/rotate-ca.go: `--talos` and
/// `--kubernetes` pick the CA, a dry run unless `--dry-run=false`, the new talosconfig written
/// to `-o`); a talosconfig's client certificate is issued again by `talosctl config new`
/// (`--roles`, `--crt-ttl`), a kubeconfig's by `talosctl kubeconfig` (each download is newly
/// signed, for a year); Talos renews its server certificates itself, a reboot or upgrade
/// included (website/content/v1.12/talos-guides/howto/cert-management.md).
pub fn renewal(c: &CertExpiry) -> String {
    match c.certificate {
        "talos CA" => "talosctl rotate-ca --talos=true --kubernetes=false (a dry run; again \
             with --dry-run=false to apply it and write the new talosconfig, -o FILE)"
            .to_string(),
        "talos client" => format!(
            "talosctl --context {} -n CONTROL_PLANE config new FILE --roles ROLE --crt-ttl \
             8760h while it still works, then talosctl config merge FILE",
            c.context
        ),
        "kubernetes client" => "talosctl -n CONTROL_PLANE kubeconfig: each download is a \
             newly signed admin certificate, valid for a year"
            .to_string(),
        "apid server" | "kubernetes API server" => "Talos renews it itself; if it does not, \
             reboot the node (talosctl -n NODE reboot); the CA behind it: talosctl rotate-ca"
            .to_string(),
        other => format!("renew the {other} certificate"),
    }
}

/// Every certificate of `cluster`'s contexts (the one in use first, then the alternates).
/// `kube_cert` gives a kubeconfig user's client certificate (PEM), if it has one.
pub fn cluster_cert_expiry(
    cluster: &Cluster,
    kube_cert: &dyn Fn(&str) -> Result<Option<String>, String>,
    now: i64,
) -> Vec<CertExpiry> {
    let name = &cluster.name;
    let mut out = Vec::new();
    for ctx in cluster.talos.iter().chain(&cluster.alternate_talos) {
        if !ctx.ca_pem.is_empty() {
            out.push(entry(name, &ctx.name, "talos CA", &ctx.ca_pem, now));
        }
        if !ctx.crt_pem.is_empty() {
            out.push(entry(name, &ctx.name, "talos client", &ctx.crt_pem, now));
        }
    }
    for ctx in cluster.kube.iter().chain(&cluster.alternate_kube) {
        match kube_cert(&ctx.user) {
            Ok(Some(pem)) => out.push(entry(name, &ctx.name, "kubernetes client", &pem, now)),
            Ok(None) => {}
            Err(e) => out.push(ending(name, &ctx.name, "kubernetes client", Err(e), now)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_days_warn_and_seven_fail() {
        let day = 86_400;
        assert_eq!(verdict(100 * day, 0), ExpiryVerdict::Ok);
        assert_eq!(verdict(30 * day, 0), ExpiryVerdict::Ok);
        assert_eq!(verdict(30 * day - 1, 0), ExpiryVerdict::Warn);
        assert_eq!(verdict(10 * day, 0), ExpiryVerdict::Warn);
        assert_eq!(verdict(7 * day - 1, 0), ExpiryVerdict::Fail);
        assert_eq!(verdict(-day, 0), ExpiryVerdict::Fail);
    }

    #[test]
    fn soonest_first_with_unreadable_ones_first_and_each_has_a_fix() {
        let cert = |context: &str, certificate, days: Option<i64>| CertExpiry {
            cluster: "prod".into(),
            context: context.into(),
            certificate,
            not_after: days.map(|d| d * 86_400),
            days_left: days,
            verdict: days.map_or(ExpiryVerdict::Fail, |d| verdict(d * 86_400, 0)),
            error: days.is_none().then(|| "bad PEM".to_string()),
            endpoint: None,
        };
        let mut certs = vec![
            cert("a", "talos CA", Some(3000)),
            cert("a", "talos client", Some(9)),
            cert("b", "kubernetes client", None),
            cert("b", "talos client", Some(-2)),
        ];
        soonest_first(&mut certs);
        let order: Vec<(&str, &str)> = certs
            .iter()
            .map(|c| (c.context.as_str(), c.certificate))
            .collect();
        assert_eq!(
            order,
            [
                ("b", "kubernetes client"),
                ("b", "talos client"),
                ("a", "talos client"),
                ("a", "talos CA")
            ]
        );
        assert_eq!(expires_text(&certs[0]), "unreadable: bad PEM");
        assert_eq!(expires_text(&certs[1]), "1969-12-30 (expired 2 days ago)");
        assert_eq!(expires_text(&certs[2]), "1970-01-10 (in 9 days)");
        assert!(renewal(&certs[1]).starts_with("talosctl --context b -n CONTROL_PLANE config new"));
        assert!(renewal(&certs[3]).starts_with("talosctl rotate-ca --talos=true"));
        assert!(renewal(&certs[0]).contains("talosctl -n CONTROL_PLANE kubeconfig"));
    }

    #[test]
    fn problems_say_which_certificate_and_when() {
        let cert = |days: i64| CertExpiry {
            cluster: "prod".into(),
            context: "prod-expiring".into(),
            certificate: "talos client",
            not_after: Some(days * 86_400),
            days_left: Some(days),
            verdict: verdict(days * 86_400, 0),
            error: None,
            endpoint: None,
        };
        assert_eq!(expiry_problem(&cert(90)), None);
        assert_eq!(
            expiry_problem(&cert(9)).as_deref(),
            Some("talos client cert (prod-expiring) expires in 9d")
        );
        assert_eq!(
            expiry_problem(&cert(-3)).as_deref(),
            Some("talos client cert (prod-expiring) expired 3d ago")
        );
    }
}
