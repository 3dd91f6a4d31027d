//! From taloscope's config to a ready plan: the provider's clients (XML-RPC
//! or OneFlow, credentials as configured or as OpenNebula's CLI finds them),
//! the template or service role, the checked machine config and VM names.
use std::collections::BTreeSet;
use std::time::Duration;

use crate::config::{ClusterConfig, Config, MachineRole, NameOrId, ProviderConfig, ProviderKind};
use crate::opennebula::auth::{self, AuthSource, Credentials, OneEnvironment, Protocol};
use crate::opennebula::{FlowClient, OneClient, OneError, TemplateInfo};

use super::ProvisionError;
use super::journal::ProviderAt;
use super::machine_config::MachineConfig;
use super::plan::{DEFAULT_NAME_PATTERN, PlanSource, ProvisionPlan, vm_names};
use super::room::{ProviderRoom, QuotaReading, VmDemand};

/// Bound on one call to a provider.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// A provider's clients.
#[derive(Debug, Clone)]
pub enum ProviderClients {
    /// VM templates over XML-RPC.
    Templates(OneClient),
    /// A OneFlow service; its VMs' state and IPs are read over XML-RPC (`one.vm.info`), since
    /// a role's node in the service document carries only the VM's identity.
    Flow { flow: FlowClient, vms: OneClient },
}

/// A configured provider, ready to call.
#[derive(Debug, Clone)]
pub struct Provider {
    pub name: String,
    pub kind: ProviderKind,
    pub endpoint: String,
    pub clients: ProviderClients,
}

impl Provider {
    /// The provider as its journal keys VMs: name and endpoint.
    pub fn at(&self) -> ProviderAt<'_> {
        ProviderAt {
            name: &self.name,
            endpoint: &self.endpoint,
        }
    }

    /// The XML-RPC client VMs are read and terminated through.
    pub fn vm_client(&self) -> &OneClient {
        match &self.clients {
            ProviderClients::Templates(c) => c,
            ProviderClients::Flow { vms, .. } => vms,
        }
    }

    /// What new VMs can come from: its VM templates, or its OneFlow services with their roles.
    pub async fn sources(&self) -> Result<Vec<SourceChoice>, OneError> {
        let choice = |id, name, roles| SourceChoice { id, name, roles };
        Ok(match &self.clients {
            ProviderClients::Templates(client) => (client.templates().await?.into_iter())
                .map(|t| choice(t.id, t.name, Vec::new()))
                .collect(),
            ProviderClients::Flow { flow, .. } => (flow.services().await?.into_iter())
                .map(|s| choice(s.id, s.name, s.roles.into_iter().map(|r| r.name).collect()))
                .collect(),
        })
    }
}

/// One thing new VMs can come from, as the provider lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChoice {
    pub id: u64,
    pub name: String,
    /// OneFlow services: their role names; empty for VM templates.
    pub roles: Vec<String>,
}

impl SourceChoice {
    pub fn label(&self) -> String {
        if self.roles.is_empty() {
            format!("{} (id {})", self.name, self.id)
        } else {
            format!(
                "{} (id {}; roles {})",
                self.name,
                self.id,
                self.roles.join(", ")
            )
        }
    }

    /// Whether it is the one the config names.
    pub fn is(&self, wanted: &NameOrId) -> bool {
        match wanted {
            NameOrId::Id(id) => *id == self.id,
            NameOrId::Name(name) => *name == self.name,
        }
    }
}

/// Builds the clients of provider `name` (nothing is dialled yet); `env` is OpenNebula's
/// environment as commands/ captured it. A OneFlow provider needs an XML-RPC endpoint too:
/// `xmlrpc_endpoint`, else `ONE_XMLRPC`.
pub fn connect(
    name: &str,
    cfg: &ProviderConfig,
    env: &OneEnvironment,
) -> Result<Provider, ProvisionError> {
    let source = match (&cfg.username, &cfg.password, &cfg.auth_file) {
        (Some(u), Some(p), _) => AuthSource::Inline(Credentials::new(u, p)),
        (_, _, Some(f)) => AuthSource::File(f.clone()),
        _ => AuthSource::Environment,
    };
    let credentials = auth::credentials(name, &source, env)?;
    let (endpoint, clients) = match cfg.kind {
        ProviderKind::Opennebula => {
            let endpoint = auth::endpoint(name, Protocol::XmlRpc, cfg.endpoint.as_deref(), env)?;
            let client = OneClient::new(name, &endpoint, credentials, CALL_TIMEOUT)?;
            (endpoint, ProviderClients::Templates(client))
        }
        ProviderKind::Oneflow => {
            let endpoint = auth::endpoint(name, Protocol::OneFlow, cfg.endpoint.as_deref(), env)?;
            let flow = FlowClient::new(name, &endpoint, credentials.clone(), CALL_TIMEOUT)?;
            let xmlrpc = cfg
                .xmlrpc_endpoint
                .as_deref()
                .or_else(|| env.var("ONE_XMLRPC"))
                .ok_or_else(|| OneError::NoXmlRpcEndpoint {
                    provider: name.to_string(),
                })?;
            let url = auth::endpoint(name, Protocol::XmlRpc, Some(xmlrpc), env)?;
            let vms = OneClient::new(name, &url, credentials, CALL_TIMEOUT)?;
            (endpoint, ProviderClients::Flow { flow, vms })
        }
    };
    Ok(Provider {
        name: name.to_string(),
        kind: cfg.kind,
        endpoint,
        clients,
    })
}

/// What the operator asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRequest {
    pub cluster: String,
    pub role: MachineRole,
    pub count: usize,
    /// Overrides the cluster's configured provider.
    pub provider: Option<String>,
    /// Default `{cluster}-{role}-{n}`.
    pub name_pattern: Option<String>,
}

/// The cluster's entry in the config, or an error that says what to add.
pub fn cluster_entry<'a>(
    config: &'a Config,
    cluster: &str,
) -> Result<&'a ClusterConfig, ProvisionError> {
    config
        .clusters
        .get(cluster)
        .ok_or_else(|| ProvisionError::Config {
            file: config.file_label(),
            message: format!(
                "cluster {cluster:?} has no entry under clusters:; add its provider, templates and machine_configs"
            ),
        })
}

/// The provider for a request: `--provider`, else the cluster's own.
pub fn provider_for<'a>(
    config: &'a Config,
    request: &PlanRequest,
) -> Result<(&'a str, &'a ProviderConfig), ProvisionError> {
    let entry = config.clusters.get(&request.cluster);
    let wanted = request
        .provider
        .as_deref()
        .or_else(|| entry.and_then(|e| e.provider.as_deref()))
        .ok_or_else(|| ProvisionError::Config {
            file: config.file_label(),
            message: format!(
                "cluster {:?} names no provider; add provider: NAME to it or pass --provider",
                request.cluster
            ),
        })?;
    config
        .providers
        .get_key_value(wanted)
        .map(|(k, v)| (k.as_str(), v))
        .ok_or_else(|| {
            let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
            ProvisionError::Config {
                file: config.file_label(),
                message: format!(
                    "no provider named {wanted:?} under providers: (known: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            }
        })
}

/// Checks the request against the config and the provider, and makes the
/// plan. `taken` holds names already in use (Kubernetes nodes, Talos
/// members); the provider's own VM names are added.
pub async fn plan(
    config: &Config,
    provider: &Provider,
    request: &PlanRequest,
    taken: &BTreeSet<String>,
) -> Result<ProvisionPlan, ProvisionError> {
    if request.count == 0 {
        return Err(ProvisionError::Config {
            file: config.file_label(),
            message: "--count must be at least 1".into(),
        });
    }
    let entry = cluster_entry(config, &request.cluster)?;
    let role = request.role;
    let machine_config = entry.machine_configs.get(role).cloned();
    let pattern = request
        .name_pattern
        .clone()
        .unwrap_or_else(|| DEFAULT_NAME_PATTERN.to_string());
    let missing = |what: &str| ProvisionError::Config {
        file: config.file_label(),
        message: format!("cluster {:?}: no {what} for role {role}", request.cluster),
    };
    let mut room = ProviderRoom::default();
    let (source, names) = match &provider.clients {
        ProviderClients::Templates(client) => {
            let path = machine_config
                .as_ref()
                .ok_or_else(|| missing("machine_configs entry"))?;
            MachineConfig::load(path, role)?;
            let wanted = entry
                .templates
                .get(role)
                .ok_or_else(|| missing("templates entry"))?;
            let template = find_template(client, wanted).await?;
            let mut taken = taken.clone();
            taken.extend(client.vms().await?.into_iter().map(|v| v.name));
            let names = vm_names(&pattern, &request.cluster, role, request.count, &taken);
            let demand = VmDemand::of(&template, request.count as u64);
            room.quotas = Some((read_quotas(client).await, demand));
            (
                PlanSource::Template {
                    id: template.id,
                    name: template.name,
                },
                names,
            )
        }
        ProviderClients::Flow { flow, vms } => {
            if let Some(path) = &machine_config {
                MachineConfig::load(path, role)?;
            }
            let wanted = entry
                .service
                .as_ref()
                .ok_or_else(|| missing("OneFlow service"))?;
            let service = match wanted.id() {
                Some(id) => flow.service(id).await?,
                None => flow.service_named(&wanted.to_string()).await?,
            };
            let current = service.role(role.as_str()).ok_or_else(|| {
                let known: Vec<&str> = service.roles.iter().map(|r| r.name.as_str()).collect();
                ProvisionError::One(OneError::NotFound {
                    at: flow.origin().clone(),
                    what: "service role",
                    name: role.as_str().to_string(),
                    hint: format!("service {} has roles: {}", service.name, known.join(", ")),
                })
            })?;
            let count = request.count as u64;
            room.quotas = Some(quotas_for(vms, &[(current.template_id, count)]).await);
            (
                PlanSource::ServiceRole {
                    service_id: service.id,
                    service_name: service.name.clone(),
                    role: current.name.clone(),
                    cardinality: current.cardinality,
                    target: current.cardinality + request.count as u64,
                    max_vms: current.max_vms,
                },
                Vec::new(),
            )
        }
    };
    Ok(ProvisionPlan {
        cluster: request.cluster.clone(),
        provider: provider.name.clone(),
        provider_kind: provider.kind,
        endpoint: provider.endpoint.clone(),
        role,
        count: request.count,
        source,
        machine_config,
        name_pattern: pattern,
        vm_names: names,
        room,
    })
}

/// The VM quotas and what `(template id, VM count)` pairs need of them (OneFlow roles: OneFlow
/// instantiates their VMs as the user, against the same quotas); a template that cannot be read
/// is said among what could not be read.
pub async fn quotas_for(client: &OneClient, vms: &[(u64, u64)]) -> (QuotaReading, VmDemand) {
    let mut reading = read_quotas(client).await;
    let mut demand = VmDemand::default();
    for (template_id, count) in vms.iter().filter(|(_, count)| *count > 0) {
        match client.template(*template_id).await {
            Ok(t) => demand = demand.plus(VmDemand::of(&t, *count)),
            Err(e) => reading.unreadable.push(format!(
                "VM template {template_id}, whose CPU and MEMORY count against the quota, cannot be read ({e})"
            )),
        }
    }
    (reading, demand)
}

/// The VM quotas of the provider's user and of its primary group. What cannot be read is said,
/// not fatal: a user may not be allowed to read its group, or the endpoint may predate a call.
pub async fn read_quotas(client: &OneClient) -> QuotaReading {
    let mut reading = QuotaReading::default();
    match client.own_quota().await {
        Ok((user, gid)) => {
            let who = format!("user {}", user.name);
            reading.holders.push(user);
            match client.group_quota(gid).await {
                Ok(group) => reading.holders.push(group),
                Err(e) => reading.unreadable.push(format!(
                    "{who} may not read the VM quota of its group {gid} ({e})"
                )),
            }
        }
        Err(e) => reading.unreadable.push(format!(
            "the provider's user may not read its own VM quota ({e})"
        )),
    }
    reading
}

pub async fn find_template(
    client: &OneClient,
    wanted: &NameOrId,
) -> Result<TemplateInfo, OneError> {
    match wanted {
        NameOrId::Id(id) => client.template(*id).await,
        NameOrId::Name(name) => client.template_named(name).await,
    }
}

/// The names of the VM templates of the provider taloscope's config names for `cluster`;
/// `None` when it names none (a CAPI-way Talos upgrade checks its new VM template is there).
pub async fn provider_template_names(
    config: &Config,
    cluster: &crate::discovery::Cluster,
    env: &OneEnvironment,
) -> Option<Result<Vec<String>, String>> {
    let key = super::cluster::config_key(config, cluster);
    let wanted = config.clusters.get(&key)?.provider.as_deref()?;
    let listed = async {
        let provider_config = config.providers.get(wanted).ok_or_else(|| {
            format!(
                "provider {wanted:?} is not under providers: in {}",
                config.file_label()
            )
        })?;
        let provider = connect(wanted, provider_config, env).map_err(|e| e.to_string())?;
        let templates = provider
            .vm_client()
            .templates()
            .await
            .map_err(|e| e.to_string())?;
        Ok(templates.into_iter().map(|t| t.name).collect())
    };
    Some(listed.await)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Provider `lab-flow`: OneFlow with `xmlrpc_endpoint` as given and `ONE_XMLRPC` as given.
    fn lab_flow(
        xmlrpc_endpoint: Option<&str>,
        one_xmlrpc: Option<&str>,
    ) -> Result<Provider, ProvisionError> {
        let cfg = ProviderConfig {
            kind: ProviderKind::Oneflow,
            endpoint: Some("http://127.0.0.1:2474".into()),
            xmlrpc_endpoint: xmlrpc_endpoint.map(str::to_string),
            auth_file: None,
            username: Some("oneadmin".into()),
            password: Some("pw".into()),
            templates: Default::default(),
            service_template: None,
        };
        let one_xmlrpc = one_xmlrpc.map(str::to_string);
        let env = OneEnvironment::capture(&move |k: &str| {
            (k == "ONE_XMLRPC").then(|| one_xmlrpc.clone()).flatten()
        });
        connect("lab-flow", &cfg, &env)
    }

    fn xmlrpc_of(provider: &Provider) -> &str {
        &provider.vm_client().origin().endpoint
    }

    #[test]
    fn a_oneflow_provider_without_an_xmlrpc_endpoint_is_refused_by_name() {
        let err = lab_flow(None, None).unwrap_err().to_string();
        assert!(
            err.contains("provider lab-flow")
                && err.contains("xmlrpc_endpoint")
                && err.contains("ONE_XMLRPC"),
            "{err}"
        );
    }

    #[test]
    fn a_oneflow_providers_vms_are_read_at_xmlrpc_endpoint_else_one_xmlrpc() {
        let env = Some("http://127.0.0.2:2633/RPC2");
        let from_env = lab_flow(None, env).expect("ONE_XMLRPC names the endpoint");
        assert_eq!(xmlrpc_of(&from_env), "http://127.0.0.2:2633/RPC2");
        let configured = lab_flow(Some("http://127.0.0.3:2633/RPC2"), env)
            .expect("the config names the endpoint");
        assert_eq!(xmlrpc_of(&configured), "http://127.0.0.3:2633/RPC2");
        let bad = lab_flow(Some("ftp://x"), None).unwrap_err().to_string();
        assert!(bad.contains("provider lab-flow"), "{bad}");
    }
}
