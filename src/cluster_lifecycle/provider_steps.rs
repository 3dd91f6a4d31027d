//! The create's world for real: VMs through the provider (one instantiate per VM of each
//! role's template, or a OneFlow service from its service template), the maintenance API, and
//! the new cluster's Talos and Kubernetes APIs with the admin identity from its bundle.
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::config::MachineRole;
use crate::discovery::TalosContext;
use crate::kube::KubeClient;
use crate::opennebula::{ExtraTemplate, OneClient, RoleMerge};
use crate::provision::{Provider, ProviderClients};
use crate::talos::{
    CertFingerprint, ClientOptions, TalosClient, apply_configuration_insecure,
    maintenance_fingerprint,
};

use super::journal::CreatedVm;
use super::materials::Materials;
use super::plan::{CreatePlan, Delivery, VmSource};
use super::steps::{
    BootView, BootstrapAnswer, ContextsMerged, CreateSteps, EtcdForming, NewVms, NodesReady, VmBoot,
};
use crate::cluster_config::{ContextFiles, kubeconfig_from_tar_gz, merge_contexts};

/// Bound on one call to the maintenance API (dial, handshake, apply).
const MAINTENANCE_BOUND: Duration = Duration::from_secs(10);

pub struct ProviderSteps {
    plan: CreatePlan,
    provider: Provider,
    /// The operator's talosconfig and kubeconfig the new contexts are merged into.
    files: ContextFiles,
    made: Mutex<Option<Materials>>,
    talos: Mutex<HashMap<String, TalosClient>>,
    /// The kubeconfig Talos gave, once fetched.
    kubeconfig: Mutex<Option<String>>,
}

impl ProviderSteps {
    pub fn new(plan: CreatePlan, provider: Provider, files: ContextFiles) -> Self {
        ProviderSteps {
            plan,
            provider,
            files,
            made: Mutex::new(None),
            talos: Mutex::new(HashMap::new()),
            kubeconfig: Mutex::new(None),
        }
    }

    fn made(&self) -> Result<Materials, String> {
        self.made
            .lock()
            .expect("not poisoned")
            .clone()
            .ok_or_else(|| "the machine configs are not prepared".to_string())
    }

    /// A client of the new cluster's apid on `node`, with its admin identity.
    fn talos_for(&self, node: &str) -> Result<TalosClient, String> {
        if let Some(c) = self.talos.lock().expect("not poisoned").get(node) {
            return Ok(c.clone());
        }
        let admin = self.made()?.admin;
        let ctx = TalosContext {
            name: self.plan.cluster.clone(),
            file: self.plan.journal_path.clone(),
            endpoints: vec![node.to_string()],
            nodes: vec![node.to_string()],
            ca_pem: admin.ca_pem,
            crt_pem: admin.client.crt_pem,
            key_pem: crate::talos::tls::normalize_key_pem(&admin.client.key_pem),
        };
        let client = TalosClient::new(&ctx, ClientOptions::default()).map_err(|e| e.to_string())?;
        self.talos
            .lock()
            .expect("not poisoned")
            .insert(node.to_string(), client.clone());
        Ok(client)
    }

    /// The kubeconfig of the new cluster, fetched from `node` the first time.
    async fn kubeconfig(&self, node: &str) -> Result<String, String> {
        if let Some(k) = self.kubeconfig.lock().expect("not poisoned").clone() {
            return Ok(k);
        }
        let archive = self
            .talos_for(node)?
            .kubeconfig(node)
            .await
            .map_err(|e| e.to_string())?;
        let text = kubeconfig_from_tar_gz(&archive).map_err(|e| e.to_string())?;
        *self.kubeconfig.lock().expect("not poisoned") = Some(text.clone());
        Ok(text)
    }

    async fn kube(&self, node: &str) -> Result<KubeClient, String> {
        let text = self.kubeconfig(node).await?;
        let label = self.plan.journal_path.with_extension("kubeconfig");
        let load = crate::discovery::load_kubeconfig_texts(&[(label, text)]);
        let merged = load
            .merged
            .ok_or_else(|| "the kubeconfig Talos gave does not parse".to_string())?;
        let context = load
            .contexts
            .first()
            .map(|c| c.name.clone())
            .ok_or_else(|| "the kubeconfig Talos gave has no context".to_string())?;
        KubeClient::new(&merged, &context, Default::default())
            .await
            .map_err(|e| e.to_string())
    }

    /// The extra template of a role's VMs: USER_DATA over the template's own CONTEXT, or
    /// nothing but taloscope's tags (maintenance mode).
    async fn extra_for(
        &self,
        client: &OneClient,
        template_id: u64,
        role: MachineRole,
    ) -> Result<ExtraTemplate, String> {
        let extra = match self.plan.delivery {
            Delivery::UserData => {
                let template = client
                    .template(template_id)
                    .await
                    .map_err(|e| e.to_string())?;
                let made = self.made()?;
                ExtraTemplate::with_user_data(&template.context, made.config_for(role))
            }
            Delivery::Maintenance => ExtraTemplate::attributes_only(),
        };
        Ok(extra
            .attribute("TALOSCOPE_CLUSTER", &self.plan.cluster)
            .attribute("TALOSCOPE_ROLE", role.as_str()))
    }

    async fn create_template_vms(
        &self,
        client: &OneClient,
        existing: &NewVms,
    ) -> Result<NewVms, String> {
        let VmSource::Templates {
            controlplane,
            worker,
        } = &self.plan.source
        else {
            return Err("the plan is not from VM templates".into());
        };
        let mut made = Vec::new();
        for planned in &self.plan.vms {
            if existing.vms.iter().any(|v| v.name == planned.name) {
                continue;
            }
            let template = match planned.role {
                MachineRole::Controlplane => controlplane.id,
                MachineRole::Worker => worker.id,
            };
            let extra = self.extra_for(client, template, planned.role).await?;
            let id = client
                .instantiate(template, &planned.name, &extra)
                .await
                .map_err(|e| format!("{}: {e}", planned.name))?;
            made.push(CreatedVm {
                id,
                name: planned.name.clone(),
                role: planned.role,
                ip: None,
                fingerprint: None,
            });
        }
        Ok(NewVms {
            vms: made,
            service: None,
        })
    }

    async fn create_service(&self, existing: &NewVms) -> Result<NewVms, String> {
        if existing.service.is_some() {
            return Ok(NewVms::default());
        }
        let (
            ProviderClients::Flow { flow, vms },
            VmSource::Service {
                template,
                service_name,
                ..
            },
        ) = (&self.provider.clients, &self.plan.source)
        else {
            return Err("the plan is not from a OneFlow service template".into());
        };
        let service_template = flow
            .service_template(&crate::config::NameOrId::Id(template.id))
            .await
            .map_err(|e| e.to_string())?;
        let mut roles = Vec::new();
        for (role, count) in [
            (MachineRole::Controlplane, self.plan.controlplanes),
            (MachineRole::Worker, self.plan.workers),
        ] {
            let contents = match (self.plan.delivery, service_template.role(role.as_str())) {
                (Delivery::UserData, Some(r)) => {
                    Some(self.extra_for(vms, r.template_id, role).await?.render())
                }
                _ => None,
            };
            roles.push(RoleMerge {
                name: role.as_str().to_string(),
                cardinality: count as u64,
                vm_template_contents: contents,
            });
        }
        let service = flow
            .instantiate_roles(template.id, service_name, &roles)
            .await
            .map_err(|e| e.to_string())?;
        // A OneFlow that kept the template's cardinalities is asked for the plan's.
        for r in &roles {
            if service
                .role(&r.name)
                .is_some_and(|s| s.cardinality != r.cardinality)
            {
                flow.scale(service.id, &r.name, r.cardinality)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(NewVms {
            vms: Vec::new(),
            service: Some(service.id),
        })
    }

    async fn boot_of(&self, vm: CreatedVm) -> VmBoot {
        match self.provider.vm_client().vm(vm.id).await {
            Ok(info) => VmBoot {
                running: info.is_running(),
                failure: info.failure(),
                vm: CreatedVm {
                    ip: info.ip().map(str::to_string),
                    name: if info.name.is_empty() {
                        vm.name.clone()
                    } else {
                        info.name.clone()
                    },
                    ..vm
                },
            },
            Err(_) => VmBoot {
                vm,
                running: false,
                failure: None,
            },
        }
    }

    async fn look_at_service(&self, service: u64) -> Result<BootView, String> {
        let ProviderClients::Flow { flow, .. } = &self.provider.clients else {
            return Err("not a OneFlow provider".into());
        };
        let s = flow.service(service).await.map_err(|e| e.to_string())?;
        let mut view = BootView::default();
        for role in &s.roles {
            let as_node = MachineRole::parse(&role.name);
            for v in &role.vms {
                let vm = CreatedVm {
                    id: v.id,
                    name: v.name.clone(),
                    role: as_node.unwrap_or(MachineRole::Worker),
                    ip: None,
                    fingerprint: None,
                };
                let boot = self.boot_of(vm).await;
                match as_node {
                    Some(_) => view.vms.push(boot),
                    None if role.name == "gateway" && boot.running => {
                        view.gateway_ip = view.gateway_ip.or(boot.vm.ip);
                    }
                    None => {}
                }
            }
        }
        Ok(view)
    }
}

impl CreateSteps for ProviderSteps {
    fn find_vms(&self) -> BoxFuture<'_, Result<NewVms, String>> {
        Box::pin(async move {
            match (&self.provider.clients, &self.plan.source) {
                (ProviderClients::Flow { flow, .. }, VmSource::Service { service_name, .. }) => {
                    let services = flow.services().await.map_err(|e| e.to_string())?;
                    let found = services.iter().find(|s| s.name == *service_name);
                    Ok(NewVms {
                        vms: Vec::new(),
                        service: found.map(|s| s.id),
                    })
                }
                (clients, _) => {
                    let client = match clients {
                        ProviderClients::Templates(c) => c,
                        ProviderClients::Flow { vms, .. } => vms,
                    };
                    let all = client.vms().await.map_err(|e| e.to_string())?;
                    let vms = self
                        .plan
                        .vms
                        .iter()
                        .filter_map(|p| {
                            all.iter().find(|v| v.name == p.name).map(|v| CreatedVm {
                                id: v.id,
                                name: p.name.clone(),
                                role: p.role,
                                ip: v.ip().map(str::to_string),
                                fingerprint: None,
                            })
                        })
                        .collect();
                    Ok(NewVms { vms, service: None })
                }
            }
        })
    }

    fn create_vms<'a>(&'a self, existing: &'a NewVms) -> BoxFuture<'a, Result<NewVms, String>> {
        Box::pin(async move {
            match &self.provider.clients {
                ProviderClients::Templates(client) => {
                    self.create_template_vms(client, existing).await
                }
                ProviderClients::Flow { .. } => self.create_service(existing).await,
            }
        })
    }

    fn look_at_vms<'a>(&'a self, vms: &'a NewVms) -> BoxFuture<'a, Result<BootView, String>> {
        Box::pin(async move {
            if let Some(service) = vms.service {
                return self.look_at_service(service).await;
            }
            let mut view = BootView::default();
            for vm in &vms.vms {
                view.vms.push(self.boot_of(vm.clone()).await);
            }
            Ok(view)
        })
    }

    fn prepare_configs<'a>(
        &'a self,
        endpoint: &'a str,
        bundle: &'a Path,
        fresh: bool,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            // A new bundle makes an RSA key: seconds of CPU, off the IO threads.
            let (plan, endpoint, bundle) = (
                self.plan.clone(),
                endpoint.to_string(),
                bundle.to_path_buf(),
            );
            let made = tokio::task::spawn_blocking(move || {
                Materials::prepare(&plan, &endpoint, &bundle, fresh)
            })
            .await
            .map_err(|e| format!("making the configs stopped: {e}"))??;
            *self.made.lock().expect("not poisoned") = Some(made);
            Ok(())
        })
    }

    fn fingerprint<'a>(&'a self, vm: &'a CreatedVm) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let ip = vm.ip.as_deref().ok_or("no address yet")?;
            maintenance_fingerprint(ip, MAINTENANCE_BOUND)
                .await
                .map(|f| f.0)
                .map_err(|e| e.to_string())
        })
    }

    fn apply_config<'a>(
        &'a self,
        vm: &'a CreatedVm,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let ip = vm.ip.as_deref().ok_or("no address yet")?;
            let made = self.made()?;
            let pinned = CertFingerprint(fingerprint.to_string());
            apply_configuration_insecure(ip, made.config_for(vm.role), &pinned, MAINTENANCE_BOUND)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn talos_answers<'a>(&'a self, vm: &'a CreatedVm) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let ip = vm.ip.as_deref().ok_or("no address yet")?;
            let client = self.talos_for(ip)?;
            client
                .version(ip)
                .await
                .map(|_| true)
                .map_err(|e| e.to_string())
        })
    }

    fn bootstrap<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<BootstrapAnswer, String>> {
        Box::pin(async move {
            match self.talos_for(node)?.bootstrap(node).await {
                Ok(()) => Ok(BootstrapAnswer::Accepted),
                Err(e) => bootstrap_refusal(&e).ok_or_else(|| e.to_string()),
            }
        })
    }

    fn etcd<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<EtcdForming, String>> {
        Box::pin(async move {
            let client = self.talos_for(node)?;
            let members = client
                .etcd_member_list(node)
                .await
                .map_err(|e| e.to_string())?;
            let status = client.etcd_status(node).await.map_err(|e| e.to_string())?;
            let voting = members.iter().filter(|m| !m.is_learner).count();
            let leader = members
                .iter()
                .find(|m| status.leader != 0 && m.id == status.leader)
                .map(|m| m.hostname.clone());
            Ok(EtcdForming {
                members: voting,
                leader,
            })
        })
    }

    fn api<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let kube = self.kube(node).await?;
            Ok(kube
                .server_version()
                .await
                .ok()
                .map(|v| format!("Kubernetes {v} answers")))
        })
    }

    fn nodes_ready<'a>(&'a self, node: &'a str) -> BoxFuture<'a, Result<NodesReady, String>> {
        Box::pin(async move {
            let nodes = self
                .kube(node)
                .await?
                .nodes()
                .await
                .map_err(|e| e.to_string())?;
            Ok(NodesReady {
                ready: nodes.iter().filter(|n| n.ready).count(),
                registered: nodes.len(),
            })
        })
    }

    fn write_contexts<'a>(
        &'a self,
        control_planes: &'a [String],
    ) -> BoxFuture<'a, Result<ContextsMerged, String>> {
        Box::pin(async move {
            let made = self.made()?;
            let first = control_planes.first().ok_or("no control plane address")?;
            let kubeconfig = self.kubeconfig(first).await?;
            let written = merge_contexts(
                &self.files,
                &self.plan.cluster,
                &made.admin,
                control_planes,
                control_planes,
                &kubeconfig,
                std::time::SystemTime::now(),
            )
            .map_err(|e| e.to_string())?;
            let mut said =
                super::delete::written_line("merged", &self.plan.cluster, &self.files, &written);
            if let Some(m) = &written.merged {
                said.push_str(&format!(
                    "; kube context {} (cluster {}, user {})",
                    m.kube_context.name, m.kube_cluster.name, m.kube_user.name
                ));
                let switched: Vec<String> = [
                    m.previous_talos_context
                        .as_ref()
                        .map(|_| format!("talos context {}", m.talos_context.name)),
                    m.previous_kube_context
                        .as_ref()
                        .map(|_| format!("kube context {}", m.kube_context.name)),
                ]
                .into_iter()
                .flatten()
                .collect();
                if !switched.is_empty() {
                    said.push_str(&format!(
                        "; now current: {} (--keep-current-context keeps the current ones)",
                        switched.join(", ")
                    ));
                }
            }
            for warning in &written.warnings {
                said.push_str(&format!("; warning: {warning}"));
            }
            Ok(ContextsMerged {
                said,
                entries: written.merged,
            })
        })
    }
}

/// The two refusals that say what happened (upstream `internal/app/machined/internal/server/v1alpha1/
/// v1alpha1_server.go` Bootstrap): FailedPrecondition before etcd is touched, AlreadyExists when the
/// etcd data directory holds data. Anything else is an unknown outcome.
fn bootstrap_refusal(e: &crate::talos::TalosError) -> Option<BootstrapAnswer> {
    match e {
        crate::talos::TalosError::Rpc { code, message, .. } => match code {
            tonic::Code::FailedPrecondition => {
                Some(BootstrapAnswer::NotAvailableYet(message.clone()))
            }
            tonic::Code::AlreadyExists => Some(BootstrapAnswer::AlreadyBootstrapped),
            _ => None,
        },
        _ => None,
    }
}
