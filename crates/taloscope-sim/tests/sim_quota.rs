//! The OpenNebula sim's room: `one.user.info` / `one.group.info` with the VM quota as oned
//! writes it, `one.template.instantiate` refused past the quota in Quota.cc's words, oneadmin
//! held to none, and OneFlow refusing a role past its `max_vms`.
mod cluster_create;
mod sim_common;

use cluster_create::{answered_id, auth, instantiate_new_cluster_service, int, string, xmlrpc};
use sim_common::start_builtin;
use taloscope_sim::SimFleet;

/// `one.user.info` or `one.group.info` of `id`; the response document.
async fn info(fleet: &SimFleet, method: &str, id: i64) -> String {
    let url = fleet.opennebula().expect("OpenNebula sim").xmlrpc_url();
    let params = [string(&auth(fleet)), int(id), "<boolean>0</boolean>".into()];
    xmlrpc(url, method, &params).await
}

/// The text of element `name` in `doc` (entities left as written).
fn element<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("&lt;{name}&gt;");
    let close = format!("&lt;/{name}&gt;");
    let start = doc.find(&open)? + open.len();
    Some(&doc[start..start + doc[start..].find(&close)?])
}

async fn instantiate(fleet: &SimFleet, name: &str) -> String {
    let one = fleet.opennebula().expect("OpenNebula sim");
    let worker = one.new_clusters().worker_template_id;
    let params = [
        string(&auth(fleet)),
        int(worker),
        string(name),
        "<boolean>0</boolean>".into(),
        string(""),
    ];
    xmlrpc(one.xmlrpc_url(), "one.template.instantiate", &params).await
}

#[tokio::test]
async fn a_tenant_past_its_vm_quota_is_refused_in_oneds_words() {
    let sim = start_builtin("one-tight", 1.0).await;
    let user = info(&sim.fleet, "one.user.info", -1).await;
    assert_eq!(element(&user, "NAME"), Some("tenant"), "{user}");
    assert_eq!(element(&user, "ID"), Some("2"));
    assert_eq!(element(&user, "VMS"), Some("8"), "{user}");
    // The cluster's 5 VMs, 3 control planes of 2 CPU and 4096 MB, 2 workers of 1 and 2048.
    assert_eq!(element(&user, "VMS_USED"), Some("5"));
    assert_eq!(element(&user, "CPU_USED"), Some("8"));
    assert_eq!(element(&user, "MEMORY_USED"), Some("16384"));
    assert!(user.contains("&lt;DEFAULT_USER_QUOTAS&gt;"), "{user}");
    let group = info(&sim.fleet, "one.group.info", 1).await;
    assert_eq!(element(&group, "NAME"), Some("users"), "{group}");
    assert_eq!(element(&group, "VMS"), Some("-1"));

    for n in 1..=3 {
        answered_id(&instantiate(&sim.fleet, &format!("w-{n}")).await);
    }
    let refused = instantiate(&sim.fleet, "w-4").await;
    assert!(
        refused.contains(
            "[one.template.instantiate] User [2] : user [2] limit of 8 reached for VMS quota in VM."
        ),
        "{refused}"
    );
    assert!(refused.contains("<i4>512</i4>"), "AUTHORIZATION: {refused}");
}

#[tokio::test]
async fn oneadmin_is_held_to_no_quota() {
    let sim = start_builtin("healthy", 1.0).await;
    let user = info(&sim.fleet, "one.user.info", -1).await;
    assert_eq!(element(&user, "ID"), Some("0"), "{user}");
    assert_eq!(element(&user, "VMS"), Some("-1"), "the default: {user}");
    let missing = info(&sim.fleet, "one.user.info", 7).await;
    assert!(
        missing.contains("[one.user.info] Error getting user [7]."),
        "{missing}"
    );
}

#[tokio::test]
async fn oneflow_refuses_a_role_past_its_max_vms() {
    let sim = start_builtin("one-tight", 1.0).await;
    let roles = serde_json::json!([{"name": "controlplane", "cardinality": 1},
                                   {"name": "worker", "cardinality": 2}]);
    let (status, answer) = instantiate_new_cluster_service(&sim.fleet, roles).await;
    assert_eq!(status, 500, "{answer}");
    assert!(
        answer.contains("Role 'worker' 'cardinality' must be lower than or equal to 'max_vms'"),
        "{answer}"
    );
}
