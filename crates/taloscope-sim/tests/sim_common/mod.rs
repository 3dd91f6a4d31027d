//! Shared helpers for the sim tests: start a scenario in a temp dir, read the talosconfig it
//! wrote, and build raw tonic clients (mutual TLS) for a context and endpoint.
#![allow(dead_code)]
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use taloscope_proto::machine::machine_service_client::MachineServiceClient;
use taloscope_sim::{Scenario, SimFleet, SimOptions};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

#[derive(Deserialize)]
pub struct TalosConfig {
    pub context: String,
    pub contexts: BTreeMap<String, Context>,
}

#[derive(Deserialize, Clone)]
pub struct Context {
    pub endpoints: Vec<String>,
    pub nodes: Vec<String>,
    pub ca: String,
    pub crt: String,
    pub key: String,
}

fn decode(b64: &str) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64 in talosconfig");
    String::from_utf8(bytes).expect("PEM text")
}

impl Context {
    pub fn ca_pem(&self) -> String {
        decode(&self.ca)
    }
    pub fn crt_pem(&self) -> String {
        decode(&self.crt)
    }
    /// The key with Talos's `ED25519 PRIVATE KEY` label rewritten for rustls.
    pub fn key_pem(&self) -> String {
        decode(&self.key).replace("ED25519 PRIVATE KEY", "PRIVATE KEY")
    }
}

pub struct Sim {
    pub fleet: SimFleet,
    pub config: TalosConfig,
    _dir: tempfile::TempDir,
}

impl Sim {
    pub fn context(&self, name: &str) -> Context {
        self.config
            .contexts
            .get(name)
            .unwrap_or_else(|| panic!("context {name} in talosconfig"))
            .clone()
    }
}

/// ring as the process-wide rustls provider, as the sim binary installs it.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub async fn start(scenario: Scenario, time_scale: f64) -> Sim {
    install_crypto_provider();
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = SimFleet::start(
        scenario,
        SimOptions {
            state_dir: dir.path().to_path_buf(),
            time_scale,
        },
    )
    .await
    .expect("sim starts");
    let text = std::fs::read_to_string(fleet.talosconfig_path()).expect("talosconfig");
    let config: TalosConfig = serde_saphyr::from_str(&text).expect("talosconfig parses");
    Sim {
        fleet,
        config,
        _dir: dir,
    }
}

/// A scenario from YAML text, read as the file `<name>.yaml` would be.
pub fn scenario_from_yaml(name: &str, text: &str) -> Scenario {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join(format!("{name}.yaml"));
    std::fs::write(&path, text).expect("write");
    Scenario::from_file(&path).expect("scenario")
}

pub async fn start_builtin(name: &str, time_scale: f64) -> Sim {
    start(
        Scenario::builtin(name).expect("builtin scenario"),
        time_scale,
    )
    .await
}

pub async fn channel(ctx: &Context, endpoint: &str) -> Result<Channel, tonic::transport::Error> {
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ctx.ca_pem()))
        .identity(Identity::from_pem(ctx.crt_pem(), ctx.key_pem()));
    Channel::from_shared(format!("https://{endpoint}"))
        .expect("endpoint uri")
        .tls_config(tls)?
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(5))
        .connect()
        .await
}

pub async fn machine(ctx: &Context, endpoint: &str) -> MachineServiceClient<Channel> {
    MachineServiceClient::new(channel(ctx, endpoint).await.expect("connects"))
}

/// A request carrying `key: value` metadata (`node` or `nodes`).
pub fn with_meta<T>(body: T, key: &'static str, value: &str) -> tonic::Request<T> {
    let mut req = tonic::Request::new(body);
    req.metadata_mut()
        .insert(key, value.parse().expect("ascii metadata"));
    req
}

/// Polls `check` every 20 ms until it returns Some, failing after `limit`.
pub async fn wait_for<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `MachineConfigSpec` of api/resource/config/config.proto: what a MachineConfig's
/// `proto_spec` holds.
#[derive(Clone, PartialEq, prost::Message)]
struct MachineConfigSpec {
    #[prost(bytes = "vec", tag = "1")]
    yaml_marshalled: Vec<u8>,
}

/// The machine config document inside a MachineConfig resource's `proto_spec`.
#[allow(dead_code)]
pub fn document_of(proto_spec: &[u8]) -> String {
    let spec =
        <MachineConfigSpec as prost::Message>::decode(proto_spec).expect("a MachineConfigSpec");
    String::from_utf8(spec.yaml_marshalled).expect("utf-8 config")
}
