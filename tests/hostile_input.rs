//! The faults of issue 15, each ending within its bound with a clear message
//! and exit code: a hostile and a 100 MB XML-RPC reply, a 100 MB Kubernetes answer, a FIFO and /dev/zero
//! as config files, an exec plugin that never exits, 20 silent endpoints.
//! Loopback listeners only.
mod hostile_support;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use hostile_support::{answering, silent_listeners, talosconfig, taloscope};
use kube::config::Kubeconfig;
use taloscope::kube::KubeClient;
use taloscope::opennebula::{Credentials, OneClient};

/// Generous for a debug binary on a busy 2-core machine; the work itself is
/// bounded far below this (3 s connect, 10 s exec plugin, --timeout).
const BOUND: Duration = Duration::from_secs(40);

fn http_reply(body: Vec<u8>) -> impl Fn(&mut dyn Write) + Send + Sync + 'static {
    move |w: &mut dyn Write| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = w.write_all(head.as_bytes());
        let _ = w.write_all(&body);
    }
}

fn one_client(addr: &str) -> OneClient {
    OneClient::new(
        "lab",
        &format!("http://{addr}/RPC2"),
        Credentials::new("alice", "pw"),
        Duration::from_secs(20),
    )
    .unwrap()
}

#[tokio::test]
async fn a_deeply_nested_xmlrpc_reply_is_an_error_not_a_stack_overflow() {
    let depth = 40_000; // ~0.9 MB
    let mut body = String::from("<?xml version=\"1.0\"?><methodResponse><params><param>");
    body.push_str(&"<value><array><data>".repeat(depth));
    body.push_str(&"</data></array></value>".repeat(depth));
    body.push_str("</param></params></methodResponse>");
    assert!(body.len() > 800_000);
    let addr = answering(http_reply(body.into_bytes()));
    let started = Instant::now();
    let err = one_client(&addr).version().await.unwrap_err().to_string();
    assert!(started.elapsed() < BOUND);
    assert!(err.contains("provider lab"), "{err}");
    assert!(err.contains("nested deeper than 64"), "{err}");
}

/// Two listeners answering 100 MB: one says so in its Content-Length, one
/// streams it until it closes.
fn hundred_mb_replies(content_type: &'static str) -> [String; 2] {
    // With a Content-Length: refused at once.
    let announced = answering(move |w: &mut dyn Write| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: 104857600\r\n\r\n"
        );
        let _ = w.write_all(head.as_bytes());
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    // Without one (read until close): refused once 32 MiB have come.
    let streamed = answering(move |w: &mut dyn Write| {
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n");
        let _ = w.write_all(head.as_bytes());
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    [announced, streamed]
}

#[tokio::test]
async fn a_100_mb_xmlrpc_reply_is_refused_without_reading_it_whole() {
    for addr in hundred_mb_replies("text/xml") {
        let started = Instant::now();
        let err = one_client(&addr).version().await.unwrap_err().to_string();
        assert!(started.elapsed() < BOUND);
        assert!(err.contains("provider lab"), "{err}");
        assert!(err.contains("larger than 32 MiB"), "{err}");
    }
}

#[tokio::test]
async fn a_100_mb_kubernetes_answer_is_refused_naming_the_context() {
    taloscope::install_crypto_provider();
    for addr in hundred_mb_replies("application/json") {
        let yaml = format!(
            "apiVersion: v1\nkind: Config\ncontexts:\n- name: kx\n  context: {{cluster: c, user: u}}\n\
             clusters:\n- name: c\n  cluster: {{server: \"http://{addr}\"}}\n\
             users:\n- name: u\n  user: {{token: t}}\n"
        );
        let kubeconfig = Kubeconfig::from_yaml(&yaml).unwrap();
        let client = KubeClient::new(&kubeconfig, "kx", Default::default())
            .await
            .unwrap();
        let started = Instant::now();
        let err = client
            .read_lease("kube-system", "taloscope-rollout")
            .await
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < BOUND);
        assert!(err.starts_with("kube context kx: "), "{err}");
        assert!(err.contains("larger than 32 MiB"), "{err}");
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_or_dev_zero_as_talosconfig_fails_at_once_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("talosconfig.fifo");
    mkfifo(&fifo);
    for (file, what) in [
        (fifo.to_str().unwrap(), "a FIFO"),
        ("/dev/zero", "a character device"),
    ] {
        for command in ["status", "contexts"] {
            let run = taloscope(home.path(), &[command, "--talosconfig", file], &[], BOUND);
            assert!(
                run.took < Duration::from_secs(15),
                "{command} {file}: {:?}",
                run.took
            );
            assert_eq!(run.code, 2, "{command} {file}: {}", run.all());
            assert!(run.all().contains(file), "{}", run.all());
            assert!(run.all().contains(what), "{}", run.all());
        }
    }
}

#[test]
fn dev_zero_as_a_machine_config_fails_at_once() {
    use taloscope::config::MachineRole;
    use taloscope::provision::MachineConfig;
    let started = Instant::now();
    let err = MachineConfig::load(Path::new("/dev/zero"), MachineRole::Worker)
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        err.contains("/dev/zero") && err.contains("character device"),
        "{err}"
    );
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn an_exec_plugin_that_never_exits_is_stopped_and_status_ends() {
    let home = tempfile::tempdir().unwrap();
    let silent = silent_listeners(1);
    let talos = home.path().join("talosconfig");
    std::fs::write(&talos, talosconfig("x", &silent.addresses)).unwrap();
    let pidfile = home.path().join("plugin.pid");
    let kube = home.path().join("kubeconfig");
    std::fs::write(
        &kube,
        format!(
            "apiVersion: v1\nkind: Config\ncontexts:\n- name: kx\n  context: {{cluster: c, user: u}}\n\
             clusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:9\"}}\n\
             users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
             command: /bin/sh\n      args: [\"-c\", \"echo $$ > {}; exec sleep 1000\"]\n",
            pidfile.display()
        ),
    )
    .unwrap();
    let config = home.path().join("taloscope.yaml");
    std::fs::write(
        &config,
        "clusters:\n  prod:\n    talos_context: x\n    kube_context: kx\n",
    )
    .unwrap();
    let args = [
        "status",
        "--talosconfig",
        talos.to_str().unwrap(),
        "--kubeconfig",
        kube.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--timeout",
        "5",
    ];
    let run = taloscope(home.path(), &args, &[], BOUND);
    assert!(run.took < Duration::from_secs(20), "took {:?}", run.took);
    assert_ne!(run.code, 0, "{}", run.all());
    assert!(run.stdout.contains("prod"), "{}", run.all());
    assert!(
        run.stdout.contains("kx"),
        "the kube context is named: {}",
        run.all()
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = Instant::now();
    while process_alive(pid) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the plugin (pid {pid}) outlived taloscope"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn twenty_silent_endpoints_cost_one_connect_timeout() {
    let home = tempfile::tempdir().unwrap();
    let silent = silent_listeners(20);
    let talos = home.path().join("talosconfig");
    std::fs::write(&talos, talosconfig("quiet", &silent.addresses)).unwrap();
    let run = taloscope(
        home.path(),
        &["status", "--talosconfig", talos.to_str().unwrap()],
        &[],
        BOUND,
    );
    // 3 s connect timeout, dialled together; the old serial dial took 60 s.
    assert!(run.took < Duration::from_secs(15), "took {:?}", run.took);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("quiet"), "{}", run.all());
    assert!(run.stdout.contains("every node failed"), "{}", run.all());
}

#[test]
fn log_level_logs_headless_commands_to_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let run = taloscope(
        home.path(),
        &["contexts", "--log-level", "debug"],
        &[],
        BOUND,
    );
    assert_eq!(run.code, 0, "{}", run.all());
    let logs = home.path().join("state/logs");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&logs), 0o700);
    let files: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(mode(&files[0]), 0o600);
}
