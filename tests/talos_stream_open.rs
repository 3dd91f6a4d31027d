//! Opening a server stream is bounded by `stream_open_timeout`, not by the unary call timeout:
//! Talos (grpc-go) sends a stream's headers only with its first message, and an ImageService
//! pull's first progress comes a sixth of the pull time in. Against `talos-1.13`-like nodes
//! whose pull takes 6 simulated seconds at time scale 1, the first message needs about 1 s.
mod talos_common;

use std::time::Duration;

use futures::StreamExt;
use talos_common::{start_at, within};
use taloscope::talos::{ClientOptions, ImageNamespace, TalosClient, TalosError};
use taloscope_sim::Scenario;

fn scenario(dir: &std::path::Path) -> Scenario {
    let text = "clusters:\n  - name: c\n    talos_version: v1.13.0\n    kubernetes_version: v1.35.0\n    image_pull_ms: 6000\n    nodes:\n      - name: cp-1\n        role: controlplane\n      - name: w-1\n        role: worker\n";
    let file = dir.join("c.yaml");
    std::fs::write(&file, text).expect("write");
    Scenario::from_file(&file).expect("scenario")
}

fn options(call: u64, stream_open: u64) -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_millis(call),
        stream_open_timeout: Duration::from_millis(stream_open),
        concurrency: 4,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opens_past_the_unary_timeout_within_its_own_bound() {
    let dir = tempfile::tempdir().expect("dir");
    let sim = start_at(scenario(dir.path()), 1.0).await;
    let w1 = sim.address("c", 1);

    // A unary timeout of 300 ms does not cut a stream whose first message needs ~1 s.
    let client = TalosClient::new(&sim.context("c"), options(300, 10_000)).expect("client");
    let image = "registry.k8s.io/kube-proxy:v1.35.1";
    let mut stream = within(
        20,
        "stream opens",
        client.image_pull(&w1, image, ImageNamespace::Cri),
    )
    .await
    .expect("the stream opens after its first message");
    let mut items = 0;
    while let Some(item) = within(20, "pull progress", stream.next()).await {
        item.expect("progress");
        items += 1;
    }
    assert!(items > 1, "progress and the image name");

    // Its own bound still holds: 300 ms to open is too short for the first message.
    let client = TalosClient::new(&sim.context("c"), options(10_000, 300)).expect("client");
    let other = "registry.k8s.io/kube-proxy:v1.35.2";
    match within(
        20,
        "stream open bound",
        client.image_pull(&w1, other, ImageNamespace::Cri),
    )
    .await
    {
        Err(TalosError::Timeout { .. }) => {}
        Ok(_) => panic!("opened within 300 ms"),
        Err(e) => panic!("expected a timeout, got {e}"),
    }
}
