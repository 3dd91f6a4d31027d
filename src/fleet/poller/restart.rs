//! The pollers of a console whose discovery is read again (`:reload`): new pollers replace the
//! running ones and are told again what was asked of the old (the focus, the watched node, the
//! nodes whose usage or configurations are read), and the contexts `:ctx` chose are kept.
use tokio::sync::mpsc;

use super::{PollerCommand, PollerHandle, PollerOptions, spawn_poller};
use crate::discovery::{Cluster, Discovery};
use crate::fleet::live::FleetEvent;

/// The running pollers, what was asked of them and where every generation reports.
pub struct LivePollers {
    handle: Option<PollerHandle>,
    options: PollerOptions,
    events: mpsc::Sender<FleetEvent>,
    /// What was asked last of each kind, in the order new pollers are told it: the focus, the
    /// watched node, the nodes whose usage is read, those whose configurations are compared
    /// (none: what new pollers start with).
    asked: [Option<PollerCommand>; 4],
    /// The contexts `:ctx` chose, by cluster; a reload keeps them.
    contexts: Vec<(String, String)>,
}

impl LivePollers {
    /// No pollers yet: [`LivePollers::start`] starts them, reporting on `events`.
    pub fn new(options: PollerOptions, events: mpsc::Sender<FleetEvent>) -> LivePollers {
        LivePollers {
            handle: None,
            options,
            events,
            asked: Default::default(),
            contexts: Vec::new(),
        }
    }

    /// Sends `request` to the running pollers, and keeps it for the next ones.
    pub fn send(&mut self, request: PollerCommand) {
        let slot = match &request {
            PollerCommand::Focus(_) => Some(0),
            PollerCommand::WatchNode { .. } | PollerCommand::UnwatchNode => Some(1),
            PollerCommand::ReadUsage { .. } => Some(2),
            PollerCommand::ReadConfigDrift { .. } => Some(3),
            PollerCommand::UseContext { cluster, context } => {
                self.contexts.retain(|(c, _)| c != cluster);
                self.contexts.push((cluster.clone(), context.clone()));
                None
            }
            PollerCommand::Refresh(_) | PollerCommand::RefreshAll | PollerCommand::Shutdown => None,
        };
        if let Some(slot) = slot {
            let nothing = matches!(
                request,
                PollerCommand::Focus(None) | PollerCommand::UnwatchNode
            );
            self.asked[slot] = (!nothing).then(|| request.clone());
        }
        if let Some(handle) = &self.handle {
            handle.send(request);
        }
    }

    /// The contexts `:ctx` chose, applied to a fresh discovery (a context gone is dropped).
    pub fn keep_contexts(&mut self, discovery: &mut Discovery) {
        self.contexts
            .retain(|(_, context)| discovery.use_context(context).is_some());
    }

    /// Stops the running pollers, if any, and starts pollers for `clusters`, told what was
    /// asked of the old ones. Call inside the runtime.
    pub fn start(&mut self, clusters: Vec<Cluster>, kubeconfig: Option<kube::config::Kubeconfig>) {
        if let Some(old) = self.handle.take() {
            old.send(PollerCommand::Shutdown);
        }
        let handle = spawn_poller(clusters, kubeconfig, self.options, self.events.clone());
        for asked in self.asked.iter().flatten() {
            handle.send(asked.clone());
        }
        self.handle = Some(handle);
    }

    /// The running pollers, taken to be shut down.
    pub fn take(&mut self) -> Option<PollerHandle> {
        self.handle.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::KubeContext;

    #[test]
    fn a_reload_keeps_the_context_ctx_chose() {
        let cluster = |name: &str, kube: &str| Cluster {
            name: name.into(),
            kube: Some(KubeContext {
                name: kube.into(),
                file: "/k".into(),
                cluster: name.into(),
                user: "u".into(),
                server: None,
            }),
            ..Default::default()
        };
        let mut a = cluster("a", "ctx-a");
        let mut other = a.kube.clone().expect("kube");
        other.name = "ctx-a-reader".into();
        a.alternate_kube = vec![other];
        let with_alternate = Discovery {
            clusters: vec![a, cluster("b", "ctx-b")],
            ..Discovery::default()
        };
        let mut live = LivePollers::new(PollerOptions::default(), mpsc::channel(1).0);
        live.send(PollerCommand::UseContext {
            cluster: "a".into(),
            context: "ctx-a-reader".into(),
        });
        live.send(PollerCommand::UseContext {
            cluster: "b".into(),
            context: "gone".into(),
        });
        let mut reloaded = with_alternate.clone();
        live.keep_contexts(&mut reloaded);
        assert_eq!(reloaded.clusters[0].kube_context(), Some("ctx-a-reader"));
        assert_eq!(reloaded.clusters[1], with_alternate.clusters[1]);
        assert_eq!(
            live.contexts,
            [("a".to_string(), "ctx-a-reader".to_string())]
        );
    }
}
