//! The OCI tags client against the sim's registry on loopback: every page of a listing in
//! lexical order through the token flow, a mirror without one, and a repository the registry
//! does not have refused naming the registry and the repository.
use std::time::Duration;

use taloscope::registry::Registry;
use taloscope_sim::registry::{RegistrySim, RegistrySpec};

const TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn lists_every_page_through_the_token_flow() {
    let tags = ["v1.12.2", "v1.12.0", "v1.12.10", "v1.12.1", "v1.13.0"];
    let sim = RegistrySim::start(RegistrySpec::installer(&tags))
        .await
        .expect("registry");
    let registry = Registry::new(&sim.endpoint(), TIMEOUT).expect("endpoint");
    let listed = registry.tags("siderolabs/installer").await.expect("tags");
    assert_eq!(
        listed,
        ["v1.12.0", "v1.12.1", "v1.12.10", "v1.12.2", "v1.13.0"],
        "lexical order, as the distribution spec lists tags"
    );
    let requests = sim.requests();
    let pages: Vec<_> = requests
        .iter()
        .filter(|r| r.target.contains("/tags/list") && r.with_token)
        .collect();
    assert_eq!(pages.len(), 3, "pages of two: {requests:?}");
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.target.starts_with("/token?"))
            .count(),
        1,
        "one token for the whole listing: {requests:?}"
    );

    let mirror = RegistrySim::start(RegistrySpec::installer(&tags).as_mirror())
        .await
        .expect("mirror");
    let through = Registry::new(&format!("{}/v2", mirror.endpoint()), TIMEOUT)
        .expect("endpoint")
        .mirror_of("ghcr.io");
    assert_eq!(
        through
            .tags("siderolabs/installer")
            .await
            .expect("tags")
            .len(),
        5
    );
    assert!(
        mirror
            .requests()
            .iter()
            .all(|r| !r.with_token && r.status == 200)
    );
}

#[tokio::test]
async fn an_unknown_repository_and_a_closed_port_are_named() {
    let sim = RegistrySim::start(RegistrySpec::installer(&["v1.12.0"]).as_mirror())
        .await
        .expect("registry");
    let registry = Registry::new(&sim.endpoint(), TIMEOUT).expect("endpoint");
    let err = registry
        .tags("siderolabs/nothing")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&sim.endpoint()) && err.contains("siderolabs/nothing") && err.contains("404"),
        "{err}"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let err = Registry::new(&closed, TIMEOUT)
        .expect("endpoint")
        .tags("siderolabs/installer")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&closed) && err.contains("cannot reach"),
        "{err}"
    );
}
