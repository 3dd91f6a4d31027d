//! A Kubernetes API sim of one control plane on its own loopback network, an admin client
//! for it, and the kube crate's own client beside it to play another console or a person with
//! kubectl writing the rollout Lease behind the console's back (tests/kube_lease.rs).
use std::net::{IpAddr, Ipv4Addr};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use taloscope::kube::KubeClient;
use taloscope_sim::kube_api::{KubeClusterFacts, KubeNodeFacts, StaticPodFacts};

use super::{KubeSim, start_kube_api};

fn facts(cluster: &str, net: u8) -> KubeClusterFacts {
    KubeClusterFacts {
        cluster: cluster.into(),
        kube_proxy_version: "v1.34.1".into(),
        nodes: vec![KubeNodeFacts {
            name: "cp-1".into(),
            address: IpAddr::V4(Ipv4Addr::new(127, 32, net, 2)),
            control_plane: true,
            kubelet_version: "v1.34.1".into(),
            talos_version: "v1.11.3".into(),
            ready: true,
            static_pods: vec![StaticPodFacts {
                component: "kube-apiserver".into(),
                version: "v1.34.1".into(),
                ready: true,
                config_version: 1,
            }],
        }],
        created_unix: 1_700_000_000,
        storage_unreachable: false,
    }
}

pub struct Fixture {
    _sim: KubeSim,
    pub config: Kubeconfig,
    pub context: String,
}

pub async fn start(cluster: &str, net: u8) -> Fixture {
    let sim = start_kube_api(
        IpAddr::V4(Ipv4Addr::new(127, 32, net, 1)),
        facts(cluster, net),
    )
    .await;
    Fixture {
        config: sim.admin_kubeconfig(cluster, false),
        context: format!("admin@{cluster}"),
        _sim: sim,
    }
}

impl Fixture {
    pub async fn client(&self) -> KubeClient {
        KubeClient::new(&self.config, &self.context, Default::default())
            .await
            .unwrap()
    }

    /// The kube crate's own client, to play another console or a person with
    /// kubectl writing the lease behind our back.
    pub async fn raw_leases(&self) -> Api<Lease> {
        let options = KubeConfigOptions {
            context: Some(self.context.clone()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(self.config.clone(), &options)
            .await
            .unwrap();
        Api::namespaced(kube::Client::try_from(config).unwrap(), "kube-system")
    }

    /// Writes `lease` (JSON) as another console or a person would have left it.
    pub async fn plant_lease(&self, lease: serde_json::Value) {
        let lease: Lease = serde_json::from_value(lease).unwrap();
        self.raw_leases()
            .await
            .create(&PostParams::default(), &lease)
            .await
            .unwrap();
    }
}
