//! The Talos API every simulated node serves through apid: MachineService, LifecycleService,
//! ImageService, COSI State and ClusterService, each following the upstream server it names.
//! The services trigger and observe node life (crate::node_life); they never form clusters or
//! serve Kubernetes themselves.
pub(crate) mod apid;
pub(crate) mod apply_configuration;
pub(crate) mod bootstrap;
pub mod cosi;
pub(crate) mod cosi_storage_network;
pub(crate) mod etcd_service;
pub(crate) mod etcd_snapshot;
pub(crate) mod files;
pub(crate) mod health;
pub(crate) mod image_pull;
pub mod lifecycle;
pub(crate) mod log_lines;
pub(crate) mod logs;
pub mod machine;
pub(crate) mod machine_changes;
pub(crate) mod machine_etcd;
pub(crate) mod machine_reads;
pub(crate) mod service_restart;
