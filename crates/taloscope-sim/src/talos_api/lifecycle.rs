//! The Talos ≥ 1.13 upgrade path: `machine.ImageService/Pull` (progress, then the image name)
//! and `machine.LifecycleService/Upgrade` (messages, then an exit code), which only stages the
//! new version for the next reboot and has no server-side etcd check. Older nodes: Unimplemented.
//! Like grpc-go, a stream's headers leave with its first message, never before.
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::apid::{Role, Route, Target, require, route, slow_down};
use super::image_pull;
use super::machine::{image_version, record};
use crate::model::core::Core;
use crate::model::scenario::parse_version;
use taloscope_proto::machine::image_service_server::ImageService;
use taloscope_proto::machine::lifecycle_service_server::LifecycleService;
use taloscope_proto::machine::{
    ImageServicePullLayerProgress, ImageServicePullProgress, ImageServicePullRequest,
    ImageServicePullResponse, LifecycleServiceInstallProgress, LifecycleServiceUpgradeRequest,
    LifecycleServiceUpgradeResponse, image_service_pull_layer_progress,
    image_service_pull_response, lifecycle_service_install_progress,
};

fn one_target<T>(core: &Core, req: &Request<T>, method: &str) -> Result<Target, Status> {
    match route(core, req, method, false)? {
        Route::One(t) => Ok(t),
        Route::Many(_) => Err(Status::invalid_argument(format!(
            "one-2-many proxying is not supported for method {method:?}"
        ))),
    }
}

/// Talos before 1.13 has no such service.
fn require_1_13(t: &Target, service: &str) -> Result<(), Status> {
    let version = t.node.status.borrow().talos_version.clone();
    match parse_version(&version) {
        Some((major, minor, _)) if (major, minor) >= (1, 13) => Ok(()),
        _ => Err(Status::unimplemented(format!("unknown service {service}"))),
    }
}

/// A server stream as the caller sees it.
pub type SimStream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

/// Answers once the stream's first message (or error) exists: grpc-go sends a server stream's
/// headers with its first message (google.golang.org/grpc internal/transport/http2_server.go,
/// `writeHeaderLocked` on the first `Write`), so a caller that bounds the opening of the stream
/// waits as long as the first message takes. An error before any message is the call's status.
async fn first_message_then_rest<T: Send + 'static>(
    mut rx: mpsc::Receiver<Result<T, Status>>,
) -> Result<Response<SimStream<T>>, Status> {
    use tokio_stream::StreamExt;
    let first = match rx.recv().await {
        Some(Ok(first)) => first,
        Some(Err(status)) => return Err(status),
        None => return Ok(Response::new(Box::pin(tokio_stream::empty()))),
    };
    let rest = ReceiverStream::new(rx);
    Ok(Response::new(Box::pin(
        tokio_stream::once(Ok(first)).chain(rest),
    )))
}

/// `machine.ImageService` of every simulated node.
pub struct ImageApi {
    core: Arc<Core>,
}

impl ImageApi {
    pub(crate) fn new(core: Arc<Core>) -> ImageApi {
        ImageApi { core }
    }
}

fn progress(
    layer: &str,
    status: image_service_pull_layer_progress::Status,
    offset: i64,
) -> ImageServicePullResponse {
    ImageServicePullResponse {
        response: Some(image_service_pull_response::Response::PullProgress(
            ImageServicePullProgress {
                layer_id: layer.into(),
                progress: Some(ImageServicePullLayerProgress {
                    status: status as i32,
                    elapsed: None,
                    offset,
                    total: 4_194_304,
                }),
            },
        )),
    }
}

#[tonic::async_trait]
impl ImageService for ImageApi {
    type PullStream = SimStream<ImageServicePullResponse>;

    /// As upstream's `Pull` (siderolabs/talos internal/app/images/images.go, v1.13): the
    /// containerd instance is checked, an image the node has is named at once, otherwise layer
    /// progress follows the manifest's resolution over the cluster's pull time, all under the
    /// caller's deadline.
    async fn pull(
        &self,
        request: Request<ImageServicePullRequest>,
    ) -> Result<Response<Self::PullStream>, Status> {
        require(&request, Role::Operator)?;
        let t = one_target(&self.core, &request, "/machine.ImageService/Pull")?;
        require_1_13(&t, "machine.ImageService")?;
        let deadline = image_pull::caller_deadline(&request);
        let req = request.into_inner();
        image_pull::check_instance(req.containerd.as_ref())?;
        let image = req.image_ref;
        if image.trim().is_empty() {
            return Err(Status::invalid_argument("image reference is empty"));
        }
        slow_down(&t.node).await;
        record(&self.core, &t, "ImageService.Pull");
        let core = self.core.clone();
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let answer = pull_with_progress(&core, &t, &image, deadline, &tx).await;
            let _ = tx
                .send(answer.map(|()| ImageServicePullResponse {
                    response: Some(image_service_pull_response::Response::Name(image)),
                }))
                .await;
        });
        first_message_then_rest(rx).await
    }
}

/// Resolving the manifest, then two layers' progress, spread over the pull time; nothing to
/// report for an image the node already has.
async fn pull_with_progress(
    core: &Core,
    t: &Target,
    image: &str,
    deadline: Option<std::time::Instant>,
    tx: &mpsc::Sender<Result<ImageServicePullResponse, Status>>,
) -> Result<(), Status> {
    use image_service_pull_layer_progress::Status as S;
    if image_pull::has_image(t, image) {
        return Ok(());
    }
    let step = t.cluster.image_pull_ms() as f64 / 1000.0 / 6.0;
    let reporting = async {
        for layer in ["sha256:1a2b", "sha256:3c4d"] {
            for (status, offset) in [
                (S::Downloading, 1_048_576),
                (S::DownloadComplete, 4_194_304),
                (S::ExtractComplete, 4_194_304),
            ] {
                core.clock.sleep(step).await;
                let _ = tx.send(Ok(progress(layer, status, offset))).await;
            }
        }
    };
    match deadline {
        Some(d) => tokio::time::timeout_at(d.into(), reporting)
            .await
            .map_err(|_| Status::deadline_exceeded("context deadline exceeded"))?,
        None => reporting.await,
    }
    image_pull::mark_pulled(t, image);
    Ok(())
}

/// `machine.LifecycleService` of every simulated node.
pub struct LifecycleApi {
    core: Arc<Core>,
}

impl LifecycleApi {
    pub(crate) fn new(core: Arc<Core>) -> LifecycleApi {
        LifecycleApi { core }
    }
}

fn message(text: String) -> LifecycleServiceUpgradeResponse {
    LifecycleServiceUpgradeResponse {
        progress: Some(LifecycleServiceInstallProgress {
            response: Some(lifecycle_service_install_progress::Response::Message(text)),
        }),
    }
}

fn exit_code(code: i32) -> LifecycleServiceUpgradeResponse {
    LifecycleServiceUpgradeResponse {
        progress: Some(LifecycleServiceInstallProgress {
            response: Some(lifecycle_service_install_progress::Response::ExitCode(code)),
        }),
    }
}

#[tonic::async_trait]
impl LifecycleService for LifecycleApi {
    type UpgradeStream = SimStream<LifecycleServiceUpgradeResponse>;

    /// As upstream's `Upgrade` (siderolabs/talos internal/app/lifecycle/lifecycle.go and
    /// container.go, v1.13): one at a time; the installer runs from an image already in the
    /// named containerd (pulled with ImageService), its output streamed, then its exit code.
    async fn upgrade(
        &self,
        request: Request<LifecycleServiceUpgradeRequest>,
    ) -> Result<Response<Self::UpgradeStream>, Status> {
        require(&request, Role::Admin)?;
        let t = one_target(&self.core, &request, "/machine.LifecycleService/Upgrade")?;
        require_1_13(&t, "machine.LifecycleService")?;
        let req = request.into_inner();
        let image = req.source.map(|s| s.image_name).unwrap_or_default();
        if image.trim().is_empty() {
            return Err(Status::invalid_argument("installer image name is required"));
        }
        image_pull::check_instance(req.containerd.as_ref())?;
        if !image_pull::has_image(&t, &image) {
            return Err(Status::internal(format!(
                "upgrade failed: installer image {image:?} not found in containerd store: \
                 image {image:?}: not found"
            )));
        }
        {
            let mut m = t.node.lock();
            if m.busy {
                return Err(Status::failed_precondition(
                    "another installation/upgrade is already in progress",
                ));
            }
            m.busy = true;
        }
        slow_down(&t.node).await;
        record(&self.core, &t, "LifecycleService.Upgrade");
        let fleet = self.core.fleet.clone();
        let (cluster, node) = (t.cluster.name().to_string(), t.node.name().to_string());
        fleet.record.upgrade_started(&cluster, &node, t.node.role());
        let clock = self.core.clock;
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            // The installer container is created and started before it prints anything.
            clock.sleep(1.0).await;
            let version = image_version(&image);
            let steps = [
                format!("using installer image {image}"),
                "validating installer".to_string(),
                "writing boot assets".to_string(),
            ];
            for step in steps {
                if tx.send(Ok(message(step))).await.is_err() {
                    break;
                }
                clock.sleep(0.5).await;
            }
            let code = match &version {
                Some(v) => {
                    let _ = tx
                        .send(Ok(message(format!(
                            "upgrade to {v} staged; reboot to apply"
                        ))))
                        .await;
                    0
                }
                None => {
                    let _ = tx
                        .send(Ok(message(format!(
                            "error: installer image {image:?} has no version tag"
                        ))))
                        .await;
                    1
                }
            };
            {
                let mut m = t.node.lock();
                if let Some(v) = version {
                    m.staged_version = Some(v);
                }
                m.busy = false;
            }
            if code != 0 {
                fleet.record.upgrade_ended(&cluster, &node);
            }
            let _ = tx.send(Ok(exit_code(code))).await;
        });
        first_message_then_rest(rx).await
    }
}
