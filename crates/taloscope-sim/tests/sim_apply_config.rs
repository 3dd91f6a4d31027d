//! ApplyConfiguration as each Talos version answers it
//! (siderolabs/talos internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go): a dry
//! run's mode, summary and diff, `NO_REBOOT` refused for a change that needs a reboot up to
//! v1.13 and taken from v1.14, `REBOOT` refused from v1.14, validation refusals and warnings,
//! `TRY` rolled back by the node after its timeout unless confirmed, `STAGED` taken at the next
//! boot, and MachineConfigs and ApplyConfiguration refused to a reader.
mod sim_common;

use std::time::Duration;

use sim_common::{Sim, channel, document_of, machine, start_builtin, wait_for, with_meta};
use taloscope_proto::cosi::resource::GetRequest;
use taloscope_proto::cosi::resource::state_client::StateClient;
use taloscope_proto::machine::apply_configuration_request::Mode;
use taloscope_proto::machine::{ApplyConfiguration, ApplyConfigurationRequest, RebootRequest};

const LIMIT: Duration = Duration::from_secs(20);
const CP1: &str = "127.10.0.1";
const W1: &str = "127.10.0.4";

/// `node`'s MachineConfigs resource as `context` reads it: the config text and the version.
async fn read_config(
    sim: &Sim,
    context: &str,
    node: &str,
) -> Result<(String, String), tonic::Status> {
    let ctx = sim.context(context);
    let channel = channel(&ctx, &ctx.endpoints[0])
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let req = GetRequest {
        namespace: "config".into(),
        r#type: "MachineConfigs.config.talos.dev".into(),
        id: "v1alpha1".into(),
        options: None,
    };
    let r = StateClient::new(channel)
        .get(with_meta(req, "node", node))
        .await?
        .into_inner()
        .resource
        .expect("resource");
    let version = r.metadata.as_ref().expect("metadata").version.clone();
    Ok((document_of(&r.spec.expect("spec").proto_spec), version))
}

/// The running configuration of `node` and the resource's version, read as `cluster`'s admin.
async fn running(sim: &Sim, cluster: &str, node: &str) -> (String, String) {
    read_config(sim, cluster, node)
        .await
        .expect("machine config")
}

async fn apply(
    sim: &Sim,
    context: &str,
    node: &str,
    data: &str,
    mode: Mode,
    dry_run: bool,
    try_timeout: Option<Duration>,
) -> Result<ApplyConfiguration, tonic::Status> {
    let ctx = sim.context(context);
    let mut client = machine(&ctx, &ctx.endpoints[0]).await;
    let req = ApplyConfigurationRequest {
        data: data.as_bytes().to_vec(),
        mode: mode as i32,
        dry_run,
        try_mode_timeout: try_timeout.map(|d| prost_types::Duration {
            seconds: d.as_secs() as i64,
            nanos: 0,
        }),
    };
    let reply = client
        .apply_configuration(with_meta(req, "node", node))
        .await?;
    Ok(reply.into_inner().messages.remove(0))
}

/// A kubelet flag: applied without a reboot by every version.
fn with_kubelet_flag(config: &str) -> String {
    let changed = config.replacen(
        "  kubelet:\n",
        "  kubelet:\n    extraArgs:\n      max-pods: \"150\"\n",
        1,
    );
    assert_ne!(changed, config, "{config}");
    changed
}

/// `machine.env`: up to v1.13 not among the keys applied at once (`CanApplyImmediate`).
fn with_env(config: &str) -> String {
    let changed = config.replacen(
        "machine:\n",
        "machine:\n  env:\n    HTTP_PROXY: http://127.0.0.1:3128\n",
        1,
    );
    assert_ne!(changed, config);
    changed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_says_the_mode_and_the_diff_and_changes_nothing() {
    for name in ["talos-1.12", "talos-1.13", "talos-1.14"] {
        let sim = start_builtin(name, 50.0).await;
        let (config, version) = running(&sim, name, W1).await;
        let reply = apply(
            &sim,
            name,
            W1,
            &with_kubelet_flag(&config),
            Mode::Auto,
            true,
            None,
        )
        .await
        .expect("dry run");
        assert_eq!(reply.mode, Mode::NoReboot as i32, "{name}");
        let expected_head = "Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\nConfig diff:\n\n--- a\n+++ b\n";
        assert!(
            reply.mode_details.starts_with(expected_head),
            "{name}: {}",
            reply.mode_details
        );
        assert!(
            reply.mode_details.contains("+      max-pods: '150'")
                || reply.mode_details.contains("+      max-pods: \"150\""),
            "{name}: {}",
            reply.mode_details
        );
        let unchanged = apply(&sim, name, W1, &config, Mode::Auto, true, None)
            .await
            .expect("dry run");
        assert!(
            unchanged.mode_details.ends_with("No changes."),
            "{}",
            unchanged.mode_details
        );
        assert_eq!(running(&sim, name, W1).await, (config, version), "{name}");
        // A control plane's own config (CA keys and all) passes its validation too.
        let (cp_config, _) = running(&sim, name, CP1).await;
        let again = apply(&sim, name, CP1, &cp_config, Mode::NoReboot, true, None)
            .await
            .expect("a control plane's config is valid");
        assert!(
            again.mode_details.ends_with("No changes."),
            "{}",
            again.mode_details
        );
        sim.fleet.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reboot_is_refused_for_a_change_that_needs_a_reboot_up_to_1_13() {
    for name in ["talos-1.12", "talos-1.13"] {
        let sim = start_builtin(name, 50.0).await;
        let (config, _) = running(&sim, name, W1).await;
        let refused = apply(
            &sim,
            name,
            W1,
            &with_env(&config),
            Mode::NoReboot,
            false,
            None,
        )
        .await
        .expect_err("needs a reboot");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{name}");
        assert!(
            refused
                .message()
                .starts_with("this config change can't be applied in immediate mode\ndiff:\n"),
            "{name}: {}",
            refused.message()
        );
        assert!(
            refused.message().contains("HTTP_PROXY"),
            "{}",
            refused.message()
        );
        let auto = apply(&sim, name, W1, &with_env(&config), Mode::Auto, true, None)
            .await
            .expect("dry run");
        assert_eq!(auto.mode, Mode::Reboot as i32, "{name}");
        assert!(
            auto.mode_details.starts_with(
                "Dry run summary:\nApplied configuration with a reboot (skipped in dry-run)."
            ),
            "{}",
            auto.mode_details
        );
        sim.fleet.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_1_14_every_change_is_applied_without_a_reboot_and_reboot_is_refused() {
    let name = "talos-1.14";
    let sim = start_builtin(name, 50.0).await;
    let (config, _) = running(&sim, name, W1).await;
    let reply = apply(
        &sim,
        name,
        W1,
        &with_env(&config),
        Mode::NoReboot,
        true,
        None,
    )
    .await
    .expect("no reboot needed");
    assert_eq!(reply.mode, Mode::NoReboot as i32);
    let refused = apply(&sim, name, W1, &config, Mode::Reboot, true, None)
        .await
        .expect_err("REBOOT");
    assert_eq!(refused.code(), tonic::Code::Unimplemented);
    assert_eq!(
        refused.message(),
        "the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead"
    );
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_validates_the_config_and_warns() {
    for name in ["talos-1.11", "talos-1.14"] {
        let sim = start_builtin(name, 50.0).await;
        let (config, _) = running(&sim, name, W1).await;
        let bad = config.replacen("  type: worker\n", "  type: router\n", 1);
        let refused = apply(&sim, name, W1, &bad, Mode::Auto, false, None)
            .await
            .expect_err("invalid");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert!(
            refused
                .message()
                .contains("* unknown machine type \"router\""),
            "{}",
            refused.message()
        );
        let join = config.replacen("  type: worker\n", "  type: join\n", 1);
        // Staged: a changed machine type needs a reboot up to v1.13.
        let warned = apply(&sim, name, W1, &join, Mode::Staged, false, None)
            .await
            .expect("applied");
        assert_eq!(
            warned.warnings,
            vec![r#"use "worker" instead of "join" for machine type"#.to_string()]
        );
        let no_v1alpha1 = apply(
            &sim,
            name,
            W1,
            "apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: w-1\n",
            Mode::NoReboot,
            false,
            None,
        )
        .await
        .expect_err("no v1alpha1");
        assert!(
            no_v1alpha1
                .message()
                .contains("doesn't contain v1alpha1 config")
        );
        sim.fleet.shutdown().await;
    }
}

/// The sim's time scale runs a 60-simulated-second try in 0.12 s; the wait is on the config
/// coming back, bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_rolls_back_after_its_timeout_unless_confirmed() {
    for name in ["talos-1.13", "talos-1.14"] {
        let sim = start_builtin(name, 500.0).await;
        let node = || {
            sim.fleet
                .state()
                .cluster(name)
                .and_then(|c| c.node("w-1").cloned())
                .expect("w-1")
        };
        let (config, _) = running(&sim, name, W1).await;
        let tried = with_kubelet_flag(&config);
        // Confirmed: applied again in no-reboot mode before the timer fires.
        let reply = apply(
            &sim,
            name,
            W1,
            &tried,
            Mode::Try,
            false,
            Some(Duration::from_secs(3600)),
        )
        .await
        .expect("try");
        assert_eq!(reply.mode, Mode::Try as i32);
        assert!(
            reply.mode_details.ends_with(
                "The config is applied in 'try' mode and will be automatically reverted back in 1h0m0s"
            ),
            "{}",
            reply.mode_details
        );
        assert!(node().config_on_trial());
        assert_eq!(running(&sim, name, W1).await.0, tried);
        apply(&sim, name, W1, &tried, Mode::NoReboot, false, None)
            .await
            .expect("confirmed");
        assert!(!node().config_on_trial(), "{name}: confirmed");
        assert_eq!(running(&sim, name, W1).await.0, tried);

        // Not confirmed: the node goes back to the confirmed config by itself.
        let second = with_env(&tried);
        let mode = if name == "talos-1.13" {
            // v1.13 refuses a try that needs a reboot, as NO_REBOOT.
            let refused = apply(&sim, name, W1, &second, Mode::Try, false, None).await;
            assert_eq!(
                refused.err().map(|s| s.code()),
                Some(tonic::Code::InvalidArgument)
            );
            with_kubelet_flag(&config).replace("\"150\"", "\"200\"")
        } else {
            second
        };
        apply(
            &sim,
            name,
            W1,
            &mode,
            Mode::Try,
            false,
            Some(Duration::from_secs(60)),
        )
        .await
        .expect("try");
        wait_for("the try rolled back", LIMIT, || async {
            (!node().config_on_trial()).then_some(())
        })
        .await;
        assert_eq!(running(&sim, name, W1).await.0, tried, "{name}");
        sim.fleet.shutdown().await;
    }
}

/// At time scale 1 the reboot takes simulated = real seconds: the second apply comes long
/// before the node is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auto_that_reboots_refuses_further_applies_until_the_node_is_back() {
    for name in ["talos-1.12", "talos-1.13"] {
        let sim = start_builtin(name, 1.0).await;
        let (config, _) = running(&sim, name, W1).await;
        let reply = apply(&sim, name, W1, &with_env(&config), Mode::Auto, false, None)
            .await
            .expect("applied with a reboot");
        assert_eq!(reply.mode, Mode::Reboot as i32);
        assert!(
            reply.mode_details.starts_with(
                "Applied configuration with a reboot: this config change can't be applied in immediate mode"
            ),
            "{}",
            reply.mode_details
        );
        let refused = apply(&sim, name, W1, &config, Mode::Auto, true, None)
            .await
            .expect_err("rebooting");
        assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{name}");
        assert!(
            refused
                .message()
                .starts_with("configuration was already applied and node is rebooting")
        );
        sim.fleet.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staged_is_applied_at_the_next_boot() {
    let name = "talos-1.13";
    let sim = start_builtin(name, 200.0).await;
    let (config, _) = running(&sim, name, W1).await;
    let staged = with_env(&config);
    let reply = apply(&sim, name, W1, &staged, Mode::Staged, false, None)
        .await
        .expect("staged");
    assert_eq!(reply.mode, Mode::Staged as i32);
    assert_eq!(
        reply.mode_details,
        "Staged configuration to be applied after the next reboot"
    );
    assert_eq!(running(&sim, name, W1).await.0, config);
    let ctx = sim.context(name);
    machine(&ctx, &ctx.endpoints[0])
        .await
        .reboot(with_meta(RebootRequest::default(), "node", W1))
        .await
        .expect("reboot");
    let booted = wait_for("w-1 running the staged config", LIMIT, || {
        let (sim, staged) = (&sim, staged.clone());
        async move {
            let (text, _) = read_config(sim, name, W1).await.ok()?;
            (text == staged).then_some(text)
        }
    })
    .await;
    assert!(booted.contains("HTTP_PROXY"));
    sim.fleet.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_neither_reads_nor_applies_the_config() {
    let name = "talos-1.13";
    let sim = start_builtin(name, 50.0).await;
    let (config, _) = running(&sim, name, W1).await;
    let refused = apply(
        &sim,
        &format!("{name}-reader"),
        W1,
        &config,
        Mode::Auto,
        true,
        None,
    )
    .await
    .expect_err("reader");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let err = read_config(&sim, &format!("{name}-reader"), W1)
        .await
        .expect_err("sensitive");
    assert_eq!(err.code(), tonic::Code::PermissionDenied);
    sim.fleet.shutdown().await;
}
