//! Certificate expiry of a cluster's credentials: the Talos API CA and client certificate of
//! each talosconfig context, and the Kubernetes client certificate of each kubeconfig context;
//! a warning 30 days before the end, a failure 7 days before (and after). Pure: the time is
//! given, the certificates come from discovery's values.
use serde::Serialize;

use crate::discovery::{Cluster, parse_client_certificate};

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
    /// `talos CA`, `talos client`, `kubernetes client`.
    pub certificate: &'static str,
    /// Seconds since the epoch; `None` when it does not parse (see `error`).
    pub not_after: Option<i64>,
    /// Whole days left (negative once expired).
    pub days_left: Option<i64>,
    pub verdict: ExpiryVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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
    let parsed = parse_client_certificate(pem);
    let (not_after, days_left, verdict, error) = match parsed {
        Ok(c) => (
            Some(c.not_after),
            Some((c.not_after - now).div_euclid(86_400)),
            verdict(c.not_after, now),
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
            Err(e) => out.push(CertExpiry {
                cluster: name.clone(),
                context: ctx.name.clone(),
                certificate: "kubernetes client",
                not_after: None,
                days_left: None,
                verdict: ExpiryVerdict::Fail,
                error: Some(e),
            }),
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
}
