//! What a CAPI-way Talos OS upgrade of the `capi` sim's capi-work leaves on the management
//! cluster, checked alike after `taloscope upgrade` (tests/capi_upgrade.rs) and the console's
//! `:upgrade` (tests/console_capi_upgrade_pty.rs): each ONEMachineTemplate copied to
//! `<old>-<version>` with the provider's VM template `<its VM template>-<version>`, the
//! TalosControlPlane and the MachineDeployment pointed at the copies; the TalosConfigTemplate and
//! `talosVersion` as they were, and no request refused by an admission webhook.
use taloscope_sim::capi::CapiSim;

/// Panics naming what the upgrade to `version` ("v1.12.0") did not leave as it should.
pub fn assert_talos_templates_rolled(capi: &CapiSim, version: &str) {
    for (name, role) in [
        ("capi-work-cp", "controlplane"),
        ("capi-work-md-0", "worker"),
    ] {
        let t = capi
            .get("onemachinetemplates", &format!("{name}-{version}"))
            .unwrap_or_else(|| panic!("the copied {role} template"));
        assert_eq!(
            t["spec"]["template"]["spec"]["templateName"],
            format!("talos-capi-work-{role}-{version}")
        );
    }
    let tcp = capi
        .get("taloscontrolplanes", "capi-work-cp")
        .expect("TalosControlPlane");
    assert_eq!(
        tcp["spec"]["infrastructureTemplate"]["name"],
        format!("capi-work-cp-{version}")
    );
    assert_eq!(
        tcp["spec"]["controlPlaneConfig"]["controlplane"]["talosVersion"], "v1.11",
        "talosVersion is the config contract, set once"
    );
    let md = capi
        .get("machinedeployments", "capi-work-md-0")
        .expect("MachineDeployment");
    assert_eq!(
        md["spec"]["template"]["spec"]["infrastructureRef"]["name"],
        format!("capi-work-md-0-{version}")
    );
    let bootstrap = capi
        .get("talosconfigtemplates", "capi-work-md-0")
        .expect("TalosConfigTemplate");
    assert_eq!(
        bootstrap["spec"]["template"]["spec"]["talosVersion"],
        "v1.11"
    );
    assert_eq!(
        md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"],
        "capi-work-md-0"
    );
    let refused = capi.admission_refusals();
    assert!(refused.is_empty(), "requests refused: {refused:?}");
}
