//! OpenNebula clients: XML-RPC (`one.*` calls at `/RPC2`) and OneFlow REST,
//! with credentials found as OpenNebula's CLI finds them. Bytes on the wire
//! <-> typed values; passwords and USER_DATA never reach logs or Debug output.
pub mod auth;
pub mod client;
pub mod errors;
pub mod oneflow;
pub mod quota;
pub mod template;
pub mod vm;
pub mod xml;
pub mod xmlrpc;

pub use auth::{AuthSource, Credentials, OneEnvironment, Protocol};
pub use client::OneClient;
pub use errors::{FailureKind, OneError, Origin};
pub use oneflow::{
    FlowClient, RoleMerge, Service, ServiceRole, ServiceTemplate, ServiceVm, TemplateRole,
};
pub use quota::{Amount, QuotaHolder, QuotaMetric};
pub use template::{ExtraTemplate, TemplateInfo};
pub use vm::{LcmState, VmInfo, VmState};
