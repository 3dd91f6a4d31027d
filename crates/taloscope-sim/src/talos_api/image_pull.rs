//! Pulling images on a simulated node as Talos's containerd does: a pull takes the cluster's
//! simulated pull time unless the node already has the image, runs under the caller's deadline
//! (`grpc-timeout`), and names its containerd instance the way upstream's helpers check it.
use std::time::{Duration, Instant};

use tonic::{Request, Status};

use super::apid::Target;
use crate::model::core::Core;
use taloscope_proto::common::{ContainerDriver, ContainerdInstance, ContainerdNamespace};

/// When the caller gives up: now + its `grpc-timeout` (gRPC over HTTP/2: digits and a unit).
pub(crate) fn caller_deadline<T>(req: &Request<T>) -> Option<Instant> {
    let text = req.metadata().get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = text.split_at(text.len().checked_sub(1)?);
    let value: u64 = digits.parse().ok()?;
    let timeout = match unit {
        "H" => Duration::from_secs(value.saturating_mul(3600)),
        "M" => Duration::from_secs(value.saturating_mul(60)),
        "S" => Duration::from_secs(value),
        "m" => Duration::from_millis(value),
        "u" => Duration::from_micros(value),
        "n" => Duration::from_nanos(value),
        _ => return None,
    };
    Some(Instant::now() + timeout)
}

/// The status Go's gRPC server gives a handler whose context deadline passed.
fn deadline_exceeded() -> Status {
    Status::deadline_exceeded("context deadline exceeded")
}

/// Pulls `image` onto the node under the caller's deadline: at once when the node already has
/// it (siderolabs/talos internal/pkg/containers/image/image.go, `WithSkipIfAlreadyPulled`),
/// else after the cluster's pull time. A deadline that lapses first fails the pull and leaves
/// the node without the image.
pub(crate) async fn pull(
    core: &Core,
    t: &Target,
    image: &str,
    deadline: Option<Instant>,
) -> Result<(), Status> {
    if has_image(t, image) {
        return Ok(());
    }
    let pulling = core.clock.sleep(t.cluster.image_pull_ms() as f64 / 1000.0);
    match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline.into(), pulling)
            .await
            .map_err(|_| deadline_exceeded())?,
        None => pulling.await,
    }
    mark_pulled(t, image);
    Ok(())
}

/// The node now has `image` in its containerd store.
pub(crate) fn mark_pulled(t: &Target, image: &str) {
    let mut m = t.node.lock();
    if !m.pulled_images.iter().any(|i| i == image) {
        m.pulled_images.push(image.to_string());
    }
}

/// Whether the node has `image` in its containerd store.
pub(crate) fn has_image(t: &Target, image: &str) -> bool {
    t.node.lock().pulled_images.iter().any(|i| i == image)
}

/// Refuses a containerd namespace upstream does not know
/// (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_images.go,
/// `containerdNamespaceHelper`).
pub(crate) fn check_namespace(namespace: i32) -> Result<(), Status> {
    match ContainerdNamespace::try_from(namespace) {
        Ok(ContainerdNamespace::NsCri | ContainerdNamespace::NsSystem) => Ok(()),
        _ => Err(Status::invalid_argument(format!(
            "invalid namespace {}",
            namespace_name(namespace)
        ))),
    }
}

fn namespace_name(namespace: i32) -> String {
    ContainerdNamespace::try_from(namespace)
        .map(|n| n.as_str_name().to_string())
        .unwrap_or_else(|_| namespace.to_string())
}

/// Refuses a containerd instance as upstream's helper does: unknown drivers and namespaces,
/// and the CRI namespace in Talos's own (system) containerd
/// (siderolabs/talos internal/app/internal/ctrhelper/ctrhelper.go, `ContainerdInstanceHelper`).
pub(crate) fn check_instance(instance: Option<&ContainerdInstance>) -> Result<(), Status> {
    let instance = instance.cloned().unwrap_or_default();
    let driver = ContainerDriver::try_from(instance.driver).map_err(|_| {
        Status::invalid_argument(format!("invalid containerd driver {}", instance.driver))
    })?;
    match ContainerdNamespace::try_from(instance.namespace) {
        Ok(ContainerdNamespace::NsCri | ContainerdNamespace::NsSystem) => {}
        _ => {
            return Err(Status::invalid_argument(format!(
                "invalid containerd namespace {}",
                namespace_name(instance.namespace)
            )));
        }
    }
    if driver == ContainerDriver::Containerd
        && instance.namespace == ContainerdNamespace::NsCri as i32
    {
        return Err(Status::invalid_argument(
            "cannot use CRI namespace with containerd driver",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(driver: ContainerDriver, namespace: ContainerdNamespace) -> ContainerdInstance {
        ContainerdInstance {
            driver: driver as i32,
            namespace: namespace as i32,
        }
    }

    #[test]
    fn containerd_instances_follow_upstreams_helper() {
        use ContainerDriver::*;
        use ContainerdNamespace::*;
        assert!(check_instance(Some(&instance(Cri, NsSystem))).is_ok());
        assert!(check_instance(Some(&instance(Cri, NsCri))).is_ok());
        assert!(check_instance(Some(&instance(Containerd, NsSystem))).is_ok());
        let refused = check_instance(Some(&instance(Containerd, NsCri))).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(
            refused.message(),
            "cannot use CRI namespace with containerd driver"
        );
        assert!(check_instance(None).is_err());
        assert!(check_namespace(NsUnknown as i32).is_err());
    }

    #[test]
    fn grpc_timeouts_are_read_in_every_unit() {
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("grpc-timeout", "250m".parse().unwrap());
        let left = caller_deadline(&req).unwrap() - Instant::now();
        assert!(left <= Duration::from_millis(250) && left > Duration::from_millis(100));
        req.metadata_mut()
            .insert("grpc-timeout", "junk".parse().unwrap());
        assert!(caller_deadline(&req).is_none());
    }
}
