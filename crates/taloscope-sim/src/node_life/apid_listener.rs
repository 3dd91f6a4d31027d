//! apid's listener on every simulated node: one loopback listener per node serving the fleet's one
//! set of tonic routes over mutual TLS, paused while the node is down and resumed when it boots
//! (the port stays reserved), each connection tagged with the node it came in on.
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tonic::codegen::Service as _;
use tonic::transport::server::Connected as _;

use crate::model::core::Core;
use crate::model::state::SimNode;

/// Which node a connection came in on (set per connection, read by the handlers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Endpoint {
    pub cluster: usize,
    pub node: usize,
}

/// Binds and listens on a fresh ephemeral port of `address`, bound by explicit port number so
/// the kernel keeps the port reserved while the listener is paused during a reboot.
pub(crate) fn bind(address: Ipv4Addr) -> std::io::Result<std::net::TcpListener> {
    let mut last_error = None;
    for _ in 0..8 {
        let probe = TcpSocket::new_v4()?;
        probe.bind(SocketAddr::from((address, 0)))?;
        let port = probe.local_addr()?.port();
        drop(probe);
        let socket = TcpSocket::new_v4()?;
        socket.set_reuseaddr(true)?;
        match socket.bind(SocketAddr::from((address, port))) {
            Ok(()) => return socket.listen(128)?.into_std(),
            // Someone took the port between the probe and the bind: try another one.
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("no free port")))
}

/// Binds and listens on exactly `address` (a formed cluster's node on apid's port).
pub(crate) fn bind_at(address: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(128)?.into_std()
}

/// Starts accepting connections for `node` on its listener. Each serving period registers a
/// fresh duplicate of the socket with tokio: a registration that saw the pause stays "closed".
pub(crate) fn start_serving(core: &Arc<Core>, node: &Arc<SimNode>) -> std::io::Result<()> {
    let Some(routes) = core.routes() else {
        return Ok(());
    };
    let mut m = node.lock();
    if let Some(old) = m.accept_task.take() {
        old.abort();
    }
    let socket = m
        .listener
        .as_ref()
        .ok_or_else(|| std::io::Error::other("node has no listener"))?
        .try_clone()?;
    let listener = TcpListener::from_std(socket)?;
    m.accept_task = Some(tokio::spawn(accept_loop(
        core.clone(),
        node.clone(),
        listener,
        routes,
    )));
    Ok(())
}

/// Pauses a node's listener: new connections are refused, but the port stays reserved.
pub(crate) fn stop_serving(node: &SimNode) {
    let mut m = node.lock();
    if let Some(task) = m.accept_task.take() {
        task.abort();
    }
    if let Some(listener) = &m.listener {
        // SAFETY: shutdown(2) on a descriptor this listener owns; on Linux it takes a listening
        // socket out of the listening state without releasing its explicitly bound port.
        unsafe {
            libc::shutdown(listener.as_raw_fd(), libc::SHUT_RD);
        }
    }
}

/// Listens again on the paused listener of `node`.
pub(crate) fn resume_serving(core: &Arc<Core>, node: &Arc<SimNode>) -> std::io::Result<()> {
    {
        let m = node.lock();
        let listener = m
            .listener
            .as_ref()
            .ok_or_else(|| std::io::Error::other("node has no listener"))?;
        // SAFETY: listen(2) on a descriptor this listener owns.
        if unsafe { libc::listen(listener.as_raw_fd(), 128) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    start_serving(core, node)
}

async fn accept_loop(
    core: Arc<Core>,
    node: Arc<SimNode>,
    listener: TcpListener,
    routes: tonic::service::Routes,
) {
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::debug!(node = node.name(), "accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        tokio::spawn(serve_connection(
            core.clone(),
            node.clone(),
            tcp,
            routes.clone(),
        ));
    }
}

async fn serve_connection(
    core: Arc<Core>,
    node: Arc<SimNode>,
    tcp: TcpStream,
    routes: tonic::service::Routes,
) {
    // A formed cluster's nodes carry certificates of its own OS CA.
    let pki = match core.fleet.clusters.get(node.cluster_index) {
        Some(c) => c.formation.as_ref().map_or(&core.pki, |f| &f.os),
        None => &core.pki,
    };
    let config = match node.tls.get() {
        Some(c) => c.clone(),
        None => match pki.server_config(&node.spec) {
            Ok(c) => node.tls.get_or_init(|| c).clone(),
            Err(e) => {
                tracing::warn!(node = node.name(), "no TLS identity: {e}");
                return;
            }
        },
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let tls = match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            tracing::debug!(node = node.name(), "TLS handshake failed: {e}");
            return;
        }
        Err(_) => return,
    };
    let info = tls.connect_info();
    let endpoint = Endpoint {
        cluster: node.cluster_index,
        node: node.node_index,
    };
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(info.clone());
            req.extensions_mut().insert(endpoint);
            let mut routes = routes.clone();
            async move { routes.call(req).await }
        });
    let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(tls), service);
    let mut status = node.subscribe();
    let boot = status.borrow().boot;
    let mut stop = core.stop.subscribe();
    tokio::select! {
        _ = connection => {}
        _ = status.wait_for(|s| !s.up || s.boot != boot) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
}
