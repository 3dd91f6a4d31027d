//! The OpenNebula sim over its sockets, with hand-written XML-RPC calls and plain HTTP for
//! OneFlow: version and pools, faults (wrong password, no such template or VM, wrong state),
//! a worker VM that boots to RUNNING and joins its cluster (apid answers on its IP, the
//! Kubernetes node turns Ready), a BOOT_FAILURE VM terminated to DONE, and OneFlow scale-out.
mod talos_common;

use std::net::Ipv4Addr;
use std::time::Duration;

use base64::Engine as _;
use talos_common::{Sim, fast, scenario, start};
use taloscope::discovery::{Sources, discover};
use taloscope::kube::KubeClient;
use taloscope::talos::TalosClient;
use taloscope_sim::NodeRole;

enum P<'a> {
    S(&'a str),
    I(i64),
    B(bool),
}

#[derive(Debug)]
struct Reply {
    ok: bool,
    body: String,
    code: i64,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

async fn call(url: &str, method: &str, params: &[P<'_>]) -> Reply {
    let mut body =
        format!("<?xml version=\"1.0\"?><methodCall><methodName>{method}</methodName><params>");
    for p in params {
        let v = match p {
            P::S(s) => format!("<string>{}</string>", escape(s)),
            P::I(i) => format!("<int>{i}</int>"),
            P::B(b) => format!("<boolean>{}</boolean>", u8::from(*b)),
        };
        body.push_str(&format!("<param><value>{v}</value></param>"));
    }
    body.push_str("</params></methodCall>");
    let text = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "text/xml")
        .body(body)
        .send()
        .await
        .expect("XML-RPC answers")
        .text()
        .await
        .expect("body");
    assert!(!text.contains("<fault>"), "fault: {text}");
    let values: Vec<&str> = text.split("<value>").skip(2).collect();
    let inner = |v: &str| {
        let start = v.find('>').map_or(0, |i| i + 1);
        let end = v.find("</").unwrap_or(v.len());
        quick_xml::escape::unescape(&v[start..end])
            .expect("escaped text")
            .into_owned()
    };
    Reply {
        ok: inner(values[0]) == "1",
        body: inner(values[1]),
        code: inner(values[2]).parse().expect("error code"),
    }
}

/// The text of the first `<name>` element (CDATA stripped).
fn tag(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{name}>"))?;
    let text = &xml[start..end];
    Some(
        text.trim_start_matches("<![CDATA[")
            .trim_end_matches("]]>")
            .to_string(),
    )
}

struct One {
    url: String,
    flow: String,
    session: String,
}

fn one(sim: &Sim) -> One {
    let o = sim.fleet.opennebula().expect("OpenNebula sim runs");
    let session = std::fs::read_to_string(o.auth_file()).expect("one_auth");
    One {
        url: o.xmlrpc_url().to_string(),
        flow: o.oneflow_url().to_string(),
        session: session.trim().to_string(),
    }
}

fn user_data(sim: &Sim, cluster: &str, role: NodeRole) -> String {
    let path = sim
        .fleet
        .opennebula()
        .expect("sim")
        .machine_config_file(cluster, role);
    let yaml = std::fs::read_to_string(path).expect("machine config");
    base64::engine::general_purpose::STANDARD.encode(yaml)
}

async fn template_id(o: &One, name: &str) -> i64 {
    let pool = call(
        &o.url,
        "one.templatepool.info",
        &[P::S(&o.session), P::I(-2), P::I(-1), P::I(-1)],
    )
    .await;
    assert!(pool.ok, "{pool:?}");
    let at = pool
        .body
        .find(&format!("<NAME>{name}</NAME>"))
        .expect("template listed");
    let before = &pool.body[..at];
    let id_at = before.rfind("<ID>").expect("id") + 4;
    before[id_at..]
        .split('<')
        .next()
        .expect("id")
        .parse()
        .expect("numeric id")
}

async fn vm(o: &One, id: i64) -> String {
    let r = call(&o.url, "one.vm.info", &[P::S(&o.session), P::I(id)]).await;
    assert!(r.ok, "{r:?}");
    r.body
}

/// `one.vm.action` `action` on VM `id`.
async fn vm_action(o: &One, action: &str, id: i64) -> Reply {
    call(
        &o.url,
        "one.vm.action",
        &[P::S(&o.session), P::S(action), P::I(id)],
    )
    .await
}

/// Polls the VM until `lcm` and `state` match, recording each LCM state seen.
async fn wait_vm(o: &One, id: i64, state: &str, lcm: &str, seen: &mut Vec<String>) -> String {
    for _ in 0..1500 {
        let xml = vm(o, id).await;
        let now = tag(&xml, "LCM_STATE").expect("LCM_STATE");
        if seen.last() != Some(&now) {
            seen.push(now.clone());
        }
        if tag(&xml, "STATE").as_deref() == Some(state) && now == lcm {
            return xml;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("VM {id} never reached STATE {state} LCM {lcm}; saw {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_pools_and_faults() {
    let sim = start(scenario("healthy")).await;
    let o = one(&sim);
    let v = call(&o.url, "one.system.version", &[P::S(&o.session)]).await;
    assert!(v.ok && v.body.starts_with('7'), "{v:?}");
    let bad = call(&o.url, "one.system.version", &[P::S("oneadmin:wrong")]).await;
    assert_eq!((bad.ok, bad.code), (false, 0x100));
    assert!(
        bad.body.contains("User couldn't be authenticated"),
        "{bad:?}"
    );
    let worker = template_id(&o, "talos-healthy-worker").await;
    let info = call(
        &o.url,
        "one.template.info",
        &[P::S(&o.session), P::I(worker)],
    )
    .await;
    assert_eq!(tag(&info.body, "TALOS_ROLE").as_deref(), Some("worker"));
    let missing = call(
        &o.url,
        "one.template.instantiate",
        &[P::S(&o.session), P::I(999), P::S("x")],
    )
    .await;
    assert_eq!((missing.ok, missing.code), (false, 0x400), "{missing:?}");
    assert!(missing.body.contains("[999]"), "{missing:?}");
    let no_vm = call(&o.url, "one.vm.info", &[P::S(&o.session), P::I(4242)]).await;
    assert_eq!(no_vm.code, 0x400);
    // The existing nodes are running VMs with their addresses.
    let pool = call(
        &o.url,
        "one.vmpool.info",
        &[P::S(&o.session), P::I(-2), P::I(-1), P::I(-1), P::I(-1)],
    )
    .await;
    assert_eq!(pool.body.matches("<VM>").count(), 5, "{}", pool.body);
    assert!(pool.body.contains("<IP><![CDATA[127.10.0.1]]></IP>"));
    let done_only = call(
        &o.url,
        "one.vmpool.info",
        &[P::S(&o.session), P::I(-2), P::I(-1), P::I(-1), P::I(6)],
    )
    .await;
    assert_eq!(done_only.body, "<VM_POOL></VM_POOL>");
    // The config file names both providers and the cluster's files.
    let config = std::fs::read_to_string(sim.fleet.opennebula().expect("sim").config_file())
        .expect("taloscope.yaml");
    assert!(
        config.contains("kind: opennebula") && config.contains("kind: oneflow"),
        "{config}"
    );
    assert!(
        config.contains(&o.url) && config.contains("talos-healthy-worker"),
        "{config}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_vm_boots_and_joins_the_cluster() {
    let sim = start(scenario("healthy")).await;
    let o = one(&sim);
    let worker = template_id(&o, "talos-healthy-worker").await;
    let extra = format!(
        "CONTEXT = [ NETWORK = \"YES\", USER_DATA = \"{}\", USER_DATA_ENCODING = \"base64\" ]",
        user_data(&sim, "healthy", NodeRole::Worker)
    );
    let r = call(
        &o.url,
        "one.template.instantiate",
        &[
            P::S(&o.session),
            P::I(worker),
            P::S("w-3"),
            P::B(false),
            P::S(&extra),
        ],
    )
    .await;
    assert!(r.ok, "{r:?}");
    let id: i64 = r.body.parse().expect("vm id");
    let mut seen = Vec::new();
    let xml = wait_vm(&o, id, "3", "3", &mut seen).await;
    // Polling may miss short states; the VM's own record says where it came from.
    assert_eq!(
        tag(&xml, "PREV_LCM_STATE").as_deref(),
        Some("2"),
        "came from BOOT"
    );
    let ip: Ipv4Addr = tag(&xml, "IP").expect("NIC IP").parse().expect("IPv4");
    assert_eq!(ip, Ipv4Addr::new(127, 10, 0, 6));
    assert_eq!(
        tag(&tag(&xml, "NIC").expect("NIC"), "NETWORK").as_deref(),
        Some("talos-healthy")
    );
    // A running VM cannot be powered off in the sim, and says why with ACTION.
    let refused = vm_action(&o, "poweroff", id).await;
    assert_eq!(refused.code, 0x800, "{refused:?}");

    let state = sim.fleet.state();
    let endpoint = talos_common::within(10, "the new node joins", async {
        loop {
            if let Some((_, n)) = state.node_by_address(ip)
                && n.status().up
            {
                return n.endpoint();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let mut ctx = sim.context("healthy");
    ctx.endpoints = vec![endpoint];
    let talos = TalosClient::new(&ctx, fast()).expect("client");
    let version = talos
        .version(&ip.to_string())
        .await
        .expect("apid answers on the VM's IP");
    assert_eq!(version.tag, "v1.11.3");

    let discovery = discover(&Sources {
        kubeconfigs: vec![sim.fleet.kubeconfig_path()],
        ..Default::default()
    });
    let kube = KubeClient::new(
        discovery.kubeconfig.as_ref().expect("kubeconfig"),
        "admin@healthy",
        Default::default(),
    )
    .await
    .expect("kube client");
    talos_common::within(10, "the kube node turns Ready", async {
        loop {
            let nodes = kube.nodes().await.expect("nodes");
            if nodes.iter().any(|n| n.name == "w-3" && n.ready) {
                assert_eq!(nodes.len(), 6);
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_failure_then_terminate_reaches_done() {
    let sim = start(scenario("healthy")).await;
    let o = one(&sim);
    let bootfail = template_id(&o, "talos-healthy-bootfail").await;
    let r = call(
        &o.url,
        "one.template.instantiate",
        &[P::S(&o.session), P::I(bootfail), P::S("")],
    )
    .await;
    let id: i64 = r.body.parse().expect("vm id");
    let mut seen = Vec::new();
    let xml = wait_vm(&o, id, "3", "36", &mut seen).await;
    assert_eq!(
        tag(&xml, "NAME"),
        Some(format!("talos-healthy-bootfail-{id}"))
    );
    let hold = vm_action(&o, "hold", id).await;
    assert_eq!(hold.code, 0x800);
    assert!(hold.body.contains("BOOT_FAILURE"), "{hold:?}");
    let t = vm_action(&o, "terminate", id).await;
    assert!(t.ok, "{t:?}");
    wait_vm(&o, id, "6", "0", &mut seen).await;
    let again = vm_action(&o, "terminate", id).await;
    assert_eq!(again.code, 0x800, "{again:?}");
    assert!(
        sim.fleet
            .state()
            .node_by_address(Ipv4Addr::new(127, 10, 0, 6))
            .is_none()
    );
}

async fn flow(
    o: &One,
    method: reqwest::Method,
    path: &str,
    auth: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let (user, pass) = auth.split_once(':').expect("user:password");
    let mut req = reqwest::Client::new()
        .request(method, format!("{}{path}", o.flow))
        .basic_auth(user, Some(pass));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.expect("OneFlow answers");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oneflow_lists_shows_and_scales_a_role() {
    let sim = start(scenario("healthy")).await;
    let o = one(&sim);
    let (status, _) = flow(&o, reqwest::Method::GET, "/service", "oneadmin:nope", None).await;
    assert_eq!(status, 401);
    let (status, templates) = flow(
        &o,
        reqwest::Method::GET,
        "/service_template",
        &o.session,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        templates["DOCUMENT_POOL"]["DOCUMENT"][0]["NAME"],
        "talos-healthy"
    );
    let (_, service) = flow(&o, reqwest::Method::GET, "/service/0", &o.session, None).await;
    let body = &service["DOCUMENT"]["TEMPLATE"]["BODY"];
    assert_eq!(body["state"], 2, "{body}");
    assert_eq!(body["roles"][1]["name"], "worker");
    assert_eq!(body["roles"][1]["nodes"].as_array().map(Vec::len), Some(2));
    let (status, _) = flow(
        &o,
        reqwest::Method::POST,
        "/service/0/scale",
        &o.session,
        Some(serde_json::json!({"role_name": "worker", "cardinality": 3, "force": false})),
    )
    .await;
    assert_eq!(status, 204);
    let (_, scaling) = flow(&o, reqwest::Method::GET, "/service/0", &o.session, None).await;
    let role = &scaling["DOCUMENT"]["TEMPLATE"]["BODY"]["roles"][1];
    assert_eq!(role["nodes"].as_array().map(Vec::len), Some(3), "{role}");
    let new_vm = &role["nodes"][2]["vm_info"]["VM"];
    assert_eq!(new_vm["NAME"], "worker_2_(service_0)");
    // OneFlow keeps only the VM's identity in a node (OpenNebula/one role.rb); the IP is
    // read over XML-RPC.
    let mut keys: Vec<&str> = new_vm
        .as_object()
        .expect("vm_info.VM")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["GID", "GNAME", "ID", "NAME", "UID", "UNAME"],
        "{new_vm}"
    );
    let id: i64 = new_vm["ID"].as_str().expect("id").parse().expect("number");
    let ip: Ipv4Addr = tag(&vm(&o, id).await, "IP")
        .expect("the VM's NIC has an IP")
        .parse()
        .expect("IPv4");
    talos_common::within(
        10,
        "the scaled-out node is Ready and the service runs",
        async {
            loop {
                let (_, s) = flow(&o, reqwest::Method::GET, "/service/0", &o.session, None).await;
                let ready = sim
                    .fleet
                    .state()
                    .node_by_address(ip)
                    .is_some_and(|(_, n)| n.status().ready);
                if ready && s["DOCUMENT"]["TEMPLATE"]["BODY"]["state"] == 2 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        },
    )
    .await;
    let (_, st) = flow(
        &o,
        reqwest::Method::GET,
        "/service_template/0",
        &o.session,
        None,
    )
    .await;
    assert_eq!(
        st["DOCUMENT"]["TEMPLATE"]["BODY"]["roles"][0]["name"],
        "controlplane"
    );
}
