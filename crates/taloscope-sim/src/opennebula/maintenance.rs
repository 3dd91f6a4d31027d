//! Talos in maintenance mode on a VM booted without a machine config: on apid's port of the VM's
//! address, TLS without client certificates, and the maintenance API only — ApplyConfiguration
//! hands the config to whoever booted the machine; everything else is refused as upstream does.
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::{Request, Response, Status};

use crate::node_life::node::APID_PORT;
use crate::opennebula::machine_config::read_user_data;
use taloscope_proto::machine::apply_configuration_request::Mode;
use taloscope_proto::machine::{
    ApplyConfiguration, ApplyConfigurationRequest, ApplyConfigurationResponse,
};

/// The running maintenance API of one machine; dropping it stops it.
pub(crate) struct MaintenanceApi {
    task: JoinHandle<()>,
}

impl Drop for MaintenanceApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves the maintenance API on `address`:50000; the receiver gets the first config applied.
pub(crate) fn start(
    address: Ipv4Addr,
) -> std::io::Result<(MaintenanceApi, oneshot::Receiver<Vec<u8>>)> {
    let tls = crate::model::pki::maintenance_server_config(IpAddr::V4(address))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let listener =
        crate::node_life::apid_listener::bind_at(SocketAddr::from((address, APID_PORT)))?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let (tx, rx) = oneshot::channel();
    let applied = Arc::new(Mutex::new(Some(tx)));
    let task = tokio::spawn(accept_loop(
        listener,
        tokio_rustls::TlsAcceptor::from(tls),
        applied,
    ));
    Ok((MaintenanceApi { task }, rx))
}

type Applied = Arc<Mutex<Option<oneshot::Sender<Vec<u8>>>>>;

async fn accept_loop(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    applied: Applied,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        let (acceptor, applied) = (acceptor.clone(), applied.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| answer(applied.clone(), req));
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

/// Routes by gRPC path: internal/app/maintenance/server.go embeds
/// `UnimplementedMachineServiceServer`, so every method it does not define answers
/// "method X not implemented"; Version needs the admin role, which only SideroLink peers get
/// (controllers/runtime/maintenance_service.go: `authz.ReadOnlyWithAdminOnSiderolink`).
async fn answer(
    applied: Applied,
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<tonic::body::Body>, Infallible> {
    let path = req.uri().path().to_string();
    let method = path.rsplit('/').next().unwrap_or_default().to_string();
    let refused = match path.as_str() {
        "/machine.MachineService/ApplyConfiguration" => {
            let codec = tonic_prost::ProstCodec::<
                ApplyConfigurationResponse,
                ApplyConfigurationRequest,
            >::default();
            let mut grpc = tonic::server::Grpc::new(codec);
            return Ok(grpc.unary(ApplyService { applied }, req).await);
        }
        "/machine.MachineService/Version" => {
            Status::unimplemented("API is not implemented in maintenance mode")
        }
        p if p.starts_with("/machine.MachineService/") => {
            Status::unimplemented(format!("method {method} not implemented"))
        }
        _ => Status::unimplemented(format!(
            "unknown service {}",
            path.trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or_default()
        )),
    };
    Ok(refused.into_http())
}

#[derive(Clone)]
struct ApplyService {
    applied: Applied,
}

impl tonic::server::UnaryService<ApplyConfigurationRequest> for ApplyService {
    type Response = ApplyConfigurationResponse;
    type Future = std::future::Ready<Result<Response<Self::Response>, Status>>;

    fn call(&mut self, request: Request<ApplyConfigurationRequest>) -> Self::Future {
        std::future::ready(apply(&self.applied, request.get_ref()).map(Response::new))
    }
}

/// server.go `ApplyConfiguration`: the modes maintenance accepts, the config parsed, a dry run
/// only described, else the config handed over.
fn apply(
    applied: &Applied,
    req: &ApplyConfigurationRequest,
) -> Result<ApplyConfigurationResponse, Status> {
    let mode = Mode::try_from(req.mode).unwrap_or(Mode::Reboot);
    if !matches!(mode, Mode::Try | Mode::Reboot | Mode::Auto) {
        return Err(Status::unimplemented(format!(
            "apply configuration --mode='{}' is not supported in maintenance mode",
            mode.as_str_name().to_ascii_lowercase().replace('_', "-")
        )));
    }
    let text = String::from_utf8_lossy(&req.data);
    // server.go: `configloader.NewFromBytes` fails the call before anything is applied.
    match read_user_data(&text, None) {
        None => {
            return Err(Status::unknown(
                "failed to parse config: not a Talos v1alpha1 machine config (no machine.type)",
            ));
        }
        Some(boots) => {
            if let Some(e) = boots.load_error {
                return Err(Status::unknown(format!("failed to parse config: {e}")));
            }
        }
    }
    let mut message = ApplyConfiguration::default();
    if req.dry_run {
        message.mode_details =
            "Dry run summary:\nNode is running in maintenance mode and does not have a config yet."
                .into();
        return Ok(ApplyConfigurationResponse {
            messages: vec![message],
        });
    }
    if let Some(tx) = applied.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = tx.send(req.data.clone());
    }
    message.mode = mode as i32;
    Ok(ApplyConfigurationResponse {
        messages: vec![message],
    })
}
