//! The Talos RBAC roles a talosconfig context's client certificate carries in
//! its Subject Organization (`os:admin`, `os:operator`, `os:reader`), and its
//! validity window: what tells the most capable of several contexts apart.
use std::fmt;

use x509_parser::prelude::{FromDer, X509Certificate};

/// One Talos RBAC role, as written in the client certificate's Organization.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    Admin,
    Operator,
    Reader,
    /// Any other role (`os:etcd:backup`, `os:image:verifier`, future roles): kept as written.
    Other(String),
}

impl Role {
    pub fn parse(org: &str) -> Role {
        match org {
            "os:admin" => Role::Admin,
            "os:operator" => Role::Operator,
            "os:reader" => Role::Reader,
            other => Role::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Role::Admin => "os:admin",
            Role::Operator => "os:operator",
            Role::Reader => "os:reader",
            Role::Other(s) => s,
        }
    }

    /// Reboot, shutdown, service restarts, image pulls (os:operator and up).
    pub fn may_reboot(&self) -> bool {
        matches!(self, Role::Admin | Role::Operator)
    }

    /// Upgrade (legacy and lifecycle), apply configuration, etcd leadership moves (os:admin).
    pub fn may_upgrade(&self) -> bool {
        matches!(self, Role::Admin)
    }

    pub fn may_apply_configuration(&self) -> bool {
        matches!(self, Role::Admin)
    }

    pub fn may_forfeit_etcd_leadership(&self) -> bool {
        matches!(self, Role::Admin)
    }

    pub fn may_pull_images(&self) -> bool {
        matches!(self, Role::Admin | Role::Operator)
    }

    /// Whether the role may change anything at all on a node.
    pub fn may_mutate(&self) -> bool {
        self.may_reboot() || self.may_upgrade()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// All roles of a client certificate. A permission holds when any role grants it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Roles(pub Vec<Role>);

impl Roles {
    pub fn may_reboot(&self) -> bool {
        self.0.iter().any(Role::may_reboot)
    }
    pub fn may_upgrade(&self) -> bool {
        self.0.iter().any(Role::may_upgrade)
    }
    pub fn may_apply_configuration(&self) -> bool {
        self.0.iter().any(Role::may_apply_configuration)
    }
    pub fn may_forfeit_etcd_leadership(&self) -> bool {
        self.0.iter().any(Role::may_forfeit_etcd_leadership)
    }
    pub fn may_pull_images(&self) -> bool {
        self.0.iter().any(Role::may_pull_images)
    }
    pub fn may_mutate(&self) -> bool {
        self.0.iter().any(Role::may_mutate)
    }
    pub fn contains(&self, role: &Role) -> bool {
        self.0.contains(role)
    }
}

impl fmt::Display for Roles {
    /// Comma-separated, as written in the certificate (`os:admin`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(Role::as_str).collect();
        f.write_str(&names.join(","))
    }
}

/// What the client certificate says about the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    pub roles: Roles,
    /// Seconds since the epoch.
    pub not_before: i64,
    pub not_after: i64,
}

/// Parses a client certificate (PEM): its roles and validity window, or why it does not parse.
pub fn parse_client_certificate(crt_pem: &str) -> Result<ClientCertificate, String> {
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(crt_pem.as_bytes()).map_err(|e| e.to_string())?;
    let (_, cert) = X509Certificate::from_der(&pem.contents).map_err(|e| e.to_string())?;
    let roles = cert
        .subject()
        .iter_organization()
        .filter_map(|attr| attr.as_str().ok())
        .map(Role::parse)
        .collect();
    Ok(ClientCertificate {
        roles: Roles(roles),
        not_before: cert.validity().not_before.timestamp(),
        not_after: cert.validity().not_after.timestamp(),
    })
}

impl Role {
    /// How much the role may do: admin over operator over reader over anything else.
    pub fn rank(&self) -> u8 {
        match self {
            Role::Admin => 3,
            Role::Operator => 2,
            Role::Reader => 1,
            Role::Other(_) => 0,
        }
    }
}

impl Roles {
    /// The most capable role held, by [`Role::rank`].
    pub fn strongest(&self) -> Option<&Role> {
        self.0.iter().max_by_key(|r| r.rank())
    }
}

/// The etcd maintenance calls, by upstream's role rules
/// (siderolabs/talos internal/app/machined/pkg/system/services/machined.go).
impl Roles {
    /// EtcdAlarmDisarm and EtcdDefragment: os:operator or os:admin.
    pub fn may_maintain_etcd(&self) -> bool {
        self.may_reboot()
    }

    /// EtcdRemoveMemberByID (and EtcdForfeitLeadership): os:admin only.
    pub fn may_remove_etcd_member(&self) -> bool {
        self.may_forfeit_etcd_leadership()
    }

    /// EtcdSnapshot: os:admin, os:operator or os:etcd:backup.
    pub fn may_snapshot_etcd(&self) -> bool {
        self.may_reboot() || self.contains(&Role::Other("os:etcd:backup".into()))
    }
}

impl ClientCertificate {
    /// Whether the certificate is valid at `now` (seconds since the epoch).
    pub fn valid_at(&self, now: i64) -> bool {
        self.not_before <= now && now <= self.not_after
    }
}
