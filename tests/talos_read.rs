//! `MachineService.Read` against the sim: the boot id as the node's published status has it,
//! NotFound for other paths, PermissionDenied below os:admin, and the sim's record of reads.
mod talos_common;

use talos_common::{scenario, start, within};
use taloscope::talos::{BOOT_ID_PATH, TalosError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_reads_the_boot_id_of_the_node_it_names() {
    let sim = start(scenario("healthy")).await;
    let client = sim.client("healthy");
    let w1 = sim.address("healthy", 3);
    within(20, "read", async {
        let raw = client.read_file(&w1, BOOT_ID_PATH).await.expect("read");
        let text = String::from_utf8(raw).expect("utf-8");
        assert!(text.ends_with('\n'), "as the kernel writes it: {text:?}");
        let id = client.boot_id(&w1).await.expect("boot id");
        assert_eq!(id, text.trim());
        let state = sim.fleet.state();
        let node = state
            .cluster("healthy")
            .and_then(|c| c.nodes().iter().find(|n| n.name() == "w-1").cloned())
            .expect("w-1");
        assert_eq!(id, node.status().boot_id, "the node's own boot id");
        let reads = state.file_reads();
        assert_eq!(reads.len(), 2);
        assert!(
            reads
                .iter()
                .all(|r| r.node == "w-1" && r.path == BOOT_ID_PATH)
        );

        match client.read_file(&w1, "/etc/shadow").await {
            Err(TalosError::Rpc { code, message, .. }) => {
                assert_eq!(code, tonic::Code::NotFound);
                assert!(message.contains("/etc/shadow"), "{message}");
            }
            other => panic!("other paths are not served: {other:?}"),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_may_not_read_files() {
    let sim = start(scenario("healthy")).await;
    let reader = sim.client("healthy-reader");
    let w1 = sim.address("healthy-reader", 3);
    within(20, "read", async {
        match reader.boot_id(&w1).await {
            Err(TalosError::PermissionDenied { node, call, .. }) => {
                assert_eq!(node, w1);
                assert_eq!(call, "Read");
            }
            other => panic!("a reader read a file: {other:?}"),
        }
    })
    .await;
    assert!(sim.fleet.state().file_reads().is_empty());
}
