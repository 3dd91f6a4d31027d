//! `taloscope certs`: when the certificates of one cluster's contexts (--context) or of every
//! cluster's end: the Talos API CA and client certificate of each talosconfig context, the
//! Kubernetes client certificate of each kubeconfig context, and what the servers present in
//! their TLS handshake (each endpoint's apid, the Kubernetes API server), soonest end first as
//! the console's certificates screen lists them. WARN within 30 days, FAIL within 7; as
//! `upgrade --plan` treats warnings, only a failure exits 1.
use std::process::ExitCode;

use super::exit::{Stop, exit_if, print_report};
use super::session::{discover_all, named};
use crate::cli::{GlobalArgs, OutputFormat};
use crate::discovery::Cluster;
use crate::fleet::cert_expiry::{
    CertExpiry, ExpiryVerdict, certificate_text, cluster_cert_expiry, expires_text,
    kubeconfig_client_cert, served_cert_expiry, soonest_first,
};
use crate::talos::ClientOptions;

pub(super) fn run(global: &GlobalArgs, output: OutputFormat) -> Result<ExitCode, Stop> {
    let (_, discovery) = discover_all(global);
    let clusters: Vec<Cluster> = match global.context.as_deref() {
        Some(wanted) => vec![named(&discovery, wanted)?],
        None => discovery.clusters.clone(),
    };
    let kube_cert = |user: &str| kubeconfig_client_cert(discovery.kubeconfig.as_ref(), user);
    let now = crate::clock::unix_now() as i64;
    let runtime = super::command_runtime()?;
    let options = ClientOptions::default();
    let within = options.connect_timeout + options.call_timeout;
    let mut certs: Vec<CertExpiry> = Vec::new();
    for cluster in &clusters {
        certs.extend(cluster_cert_expiry(cluster, &kube_cert, now));
        let (served, unread) = runtime.block_on(served_cert_expiry(cluster, within, now));
        certs.extend(served);
        for why in unread {
            eprintln!(
                "taloscope: warning: cluster {}: no certificate read: {why}",
                cluster.name
            );
        }
    }
    soonest_first(&mut certs);
    print_report(output, &certs, |c| table(c))?;
    Ok(exit_if(
        certs.iter().any(|c| c.verdict == ExpiryVerdict::Fail),
    ))
}

fn table(certs: &[CertExpiry]) -> String {
    let rows = certs.iter().map(|c| {
        let mark = match c.verdict {
            ExpiryVerdict::Ok => "OK",
            ExpiryVerdict::Warn => "WARN",
            ExpiryVerdict::Fail => "FAIL",
        };
        vec![
            mark.to_string(),
            c.cluster.clone(),
            c.context.clone(),
            certificate_text(c),
            expires_text(c),
        ]
    });
    let header = ["", "CLUSTER", "CONTEXT", "CERTIFICATE", "EXPIRES"];
    crate::printable::table(&header, rows)
}
