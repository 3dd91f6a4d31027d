//! OpenNebula in the sim: oned's XML-RPC API at `http://127.0.0.1:PORT/RPC2` and OneFlow's REST
//! API on another loopback port, one user (`oneadmin`, or `tenant` under a VM quota; generated
//! password), Talos VM templates per sim cluster (and for new clusters), and VMs that boot into
//! the Talos sim as new nodes or form new clusters. `OneSim::start` runs both.
mod cloud;
mod config_documents;
pub(crate) mod machine_config;
mod maintenance;
pub use machine_config::{LoadedConfig, load_machine_config};
pub(crate) mod capone_side;
mod oneflow;
mod quota;
mod rpc;
mod setup;
mod talos_boot;
mod template;
mod vm;
mod xml;
mod xmlrpc;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::model::clock::SimClock;
use crate::model::error::SimError;
use crate::model::state::FleetState;
use cloud::OneCloud;

/// The user every sim credential is for.
pub const ONE_USER: &str = "oneadmin";
/// Requests larger than this are refused (a machine config is a few KiB).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// What `OneSim::new_clusters` tells: where VMs of new clusters come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewClusters {
    /// `talos-controlplane`: a VM template booting Talos (USER_DATA or maintenance mode).
    pub controlplane_template: String,
    pub controlplane_template_id: i64,
    /// `talos-worker`.
    pub worker_template: String,
    pub worker_template_id: i64,
    /// The OneFlow service template `talos-cluster` (roles `controlplane` 3, `worker` 2).
    pub service_template_id: i64,
    pub service_template_name: String,
    /// `127.A.B.0`: VMs of these templates get `127.A.B.1`, `.2`, ... in creation order
    /// (the lowest free address), so a config's endpoint can name the first control plane.
    pub network: std::net::Ipv4Addr,
}

/// The running OpenNebula and OneFlow sims.
pub struct OneSim {
    xmlrpc_url: String,
    oneflow_url: String,
    files: setup::Written,
    cloud: Arc<OneCloud>,
    servers: Vec<JoinHandle<()>>,
    ca_pem: String,
}

impl OneSim {
    /// Builds the cloud for `fleet` (templates, a VM per existing node, a OneFlow service per
    /// cluster), starts both servers and writes `one_auth`, `taloscope.yaml` and the machine
    /// configs into `state_dir`.
    pub(crate) async fn start(
        fleet: Arc<FleetState>,
        clock: SimClock,
        ca_pem: &str,
        state_dir: &Path,
        spec: &crate::model::scenario::OneSpec,
    ) -> Result<OneSim, SimError> {
        let password = format!(
            "{:016x}{:016x}",
            crate::model::clock::random_u64(),
            crate::model::clock::random_u64()
        );
        let catalog = setup::catalog(&fleet, ca_pem, password, spec);
        let cloud = OneCloud::new(catalog.cloud, fleet, clock);
        let rpc = listen().await?;
        let flow = listen().await?;
        let xmlrpc_url = format!("http://{}/RPC2", rpc.1);
        let oneflow_url = format!("http://{}", flow.1);
        let servers = vec![
            tokio::spawn(serve(rpc.0, cloud.clone(), Api::XmlRpc)),
            tokio::spawn(serve(flow.0, cloud.clone(), Api::OneFlow)),
        ];
        let sim = OneSim {
            xmlrpc_url,
            oneflow_url,
            files: setup::Written::in_dir(state_dir),
            cloud,
            servers,
            ca_pem: ca_pem.to_string(),
        };
        let write = {
            let c = sim.cloud.lock();
            setup::write_files(
                &sim.files,
                &c,
                &catalog.configs,
                &sim.xmlrpc_url,
                &sim.oneflow_url,
            )
        };
        if let Err(e) = write {
            sim.stop();
            return Err(e);
        }
        Ok(sim)
    }

    /// `http://127.0.0.1:PORT/RPC2`.
    pub fn xmlrpc_url(&self) -> &str {
        &self.xmlrpc_url
    }

    /// `http://127.0.0.1:PORT` (OneFlow's routes hang off the root).
    pub fn oneflow_url(&self) -> &str {
        &self.oneflow_url
    }

    /// `DIR/one_auth`: `oneadmin:PASSWORD`, as OpenNebula's own CLI reads it.
    pub fn auth_file(&self) -> PathBuf {
        self.files.one_auth.clone()
    }

    /// `DIR/taloscope.yaml`: providers and per-cluster provisioning settings.
    pub fn config_file(&self) -> PathBuf {
        self.files.config.clone()
    }

    /// `DIR/clusters/<cluster>/<role>.yaml`.
    pub fn machine_config_file(
        &self,
        cluster: &str,
        role: crate::model::scenario::NodeRole,
    ) -> PathBuf {
        self.files.machine_config(cluster, role)
    }

    /// The cloud as a Cluster API infrastructure provider calls it.
    pub(crate) fn capone_side(&self) -> capone_side::CaponeSide {
        capone_side::CaponeSide {
            cloud: self.cloud.clone(),
            ca_pem: self.ca_pem.clone(),
        }
    }

    /// Where new clusters come from: the VM templates and the OneFlow service template that
    /// boot Talos for no existing cluster, and the network their VMs lease addresses from.
    pub fn new_clusters(&self) -> NewClusters {
        let c = self.cloud.lock();
        let name_of = |id: i64| {
            c.templates
                .iter()
                .find(|t| t.id == id)
                .map(|t| t.name.clone())
                .unwrap_or_default()
        };
        let service = c
            .flow
            .templates
            .iter()
            .find(|t| t.name == setup::NEW_CLUSTER_SERVICE);
        let role_template = |role: &str| {
            service
                .and_then(|s| s.roles.iter().find(|r| r.name == role))
                .map_or(-1, |r| r.template_id)
        };
        let [a, b] = c.new_network.1;
        NewClusters {
            controlplane_template_id: role_template("controlplane"),
            worker_template_id: role_template("worker"),
            controlplane_template: name_of(role_template("controlplane")),
            worker_template: name_of(role_template("worker")),
            service_template_id: service.map_or(-1, |s| s.id),
            service_template_name: setup::NEW_CLUSTER_SERVICE.to_string(),
            network: std::net::Ipv4Addr::new(127, a, b, 0),
        }
    }

    /// Stops both servers and every pending VM transition.
    pub fn stop(&self) {
        self.cloud.stop.send_replace(true);
        for s in &self.servers {
            s.abort();
        }
    }
}

impl Drop for OneSim {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn listen() -> Result<(TcpListener, SocketAddr), SimError> {
    let bind = SocketAddr::from(([127, 0, 0, 1], 0));
    let listen_err = |source| SimError::Listen {
        cluster: "opennebula".into(),
        node: "oned".into(),
        address: bind.to_string(),
        source,
    };
    let listener = TcpListener::bind(bind).await.map_err(listen_err)?;
    let addr = listener.local_addr().map_err(listen_err)?;
    Ok((listener, addr))
}

#[derive(Clone, Copy)]
enum Api {
    XmlRpc,
    OneFlow,
}

async fn serve(listener: TcpListener, cloud: Arc<OneCloud>, api: Api) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        let cloud = cloud.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(cloud.clone(), api, req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

fn reply(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, v);
    }
    response
}

async fn handle(
    cloud: Arc<OneCloud>,
    api: Api,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let credentials = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok());
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "text/plain",
                "request body too large or broken\n".into(),
            ));
        }
    };
    Ok(match api {
        Api::XmlRpc => {
            if path != "/RPC2" {
                reply(
                    StatusCode::NOT_FOUND,
                    "text/plain",
                    format!("no {path} here\n"),
                )
            } else if method != "POST" {
                reply(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "text/plain",
                    "XML-RPC takes POST\n".into(),
                )
            } else {
                let text = String::from_utf8_lossy(&body);
                reply(StatusCode::OK, "text/xml", rpc::answer(&cloud, &text))
            }
        }
        Api::OneFlow => {
            let (status, json) =
                oneflow::answer(&cloud, &method, &path, credentials.as_deref(), &body);
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            match json {
                Some(j) => reply(status, "application/json", j.to_string()),
                None => reply(status, "application/json", String::new()),
            }
        }
    })
}
