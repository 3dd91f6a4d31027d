//! The bad-input table of `bad_input_corpus`: config files and arguments, each
//! with the exit code it must end with and what the message must name.
/// Where a case's bad text goes: `--talosconfig`, `--kubeconfig` or `--config`.
#[derive(Clone, Copy)]
pub enum Slot {
    Talos,
    Kube,
    Config,
    /// No file: the text is the extra arguments, space-separated.
    Args,
}

pub struct Case {
    pub name: &'static str,
    pub slot: Slot,
    pub text: String,
    pub command: &'static str,
    pub code: i32,
    /// Must appear in stdout+stderr; `{file}` is the file's path.
    pub says: &'static [&'static str],
}

pub fn case(
    name: &'static str,
    slot: Slot,
    text: impl Into<String>,
    command: &'static str,
    code: i32,
    says: &'static [&'static str],
) -> Case {
    Case {
        name,
        slot,
        text: text.into(),
        command,
        code,
        says,
    }
}

fn ctx(body: &str) -> String {
    format!("context: a\ncontexts:\n  a:\n{body}")
}

fn kube(user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncontexts:\n- name: k\n  context: {{cluster: c, user: u}}\n\
         clusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:9\"}}\nusers:\n- name: u\n  user:\n{user}"
    )
}

pub fn config_cases() -> Vec<Case> {
    use Slot::*;
    let nested = "[".repeat(5000) + &"]".repeat(5000);
    let laughs = {
        let mut s = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (prev, next) in ('a'..='h').zip('b'..='i') {
            let refs = vec![format!("*{prev}"); 9].join(",");
            s.push_str(&format!("{next}: &{next} [{refs}]\n"));
        }
        s
    };
    let creds = crate::hostile_support::fixture_credentials();
    let mut v = vec![
        case(
            "talos yaml syntax",
            Talos,
            "context: a\ncontexts:\n  a:\n    endpoints: 1: 2\n",
            "contexts",
            2,
            &["{file}", "line 4"],
        ),
        case(
            "talos tab indent",
            Talos,
            "contexts:\n\ta: {}\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "talos contexts is a list",
            Talos,
            "contexts: [1, 2]\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "talos context is a string",
            Talos,
            "contexts:\n  a: hello\n",
            "contexts",
            2,
            &["{file}", "a"],
        ),
        case(
            "talos endpoints wrong type",
            Talos,
            ctx("    endpoints: {x: 1}\n"),
            "contexts",
            2,
            &["{file}", "a"],
        ),
        case(
            "talos ca not base64",
            Talos,
            ctx(
                "    endpoints: [127.0.0.1]\n    ca: \"!!!\"\n    crt: \"!!!\"\n    key: \"!!!\"\n",
            ),
            "contexts",
            2,
            &["{file}", "a"],
        ),
        case(
            "talos ca base64 of garbage",
            Talos,
            ctx(
                "    endpoints: [127.0.0.1]\n    ca: aGVsbG8=\n    crt: aGVsbG8=\n    key: aGVsbG8=\n",
            ),
            "contexts",
            2,
            &["{file}", "a"],
        ),
        case(
            "talos no credentials is listed, status names it",
            Talos,
            ctx("    endpoints: [127.0.0.1]\n"),
            "contexts",
            0,
            &["a"],
        ),
        case(
            "talos deep nesting",
            Talos,
            format!("contexts: {nested}\n"),
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "talos billion laughs",
            Talos,
            laughs.clone(),
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "talos binary",
            Talos,
            "\u{0}\u{1}\u{2}\u{fffd}",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "talos current context undefined",
            Talos,
            "context: ghost\ncontexts: {}\n",
            "contexts",
            2,
            &["{file}", "ghost"],
        ),
        case(
            "talos escape in context name",
            Talos,
            format!(
                "context: \"a\\e]0;owned\\a\"\ncontexts:\n  \"a\\e]0;owned\\a\":\n    endpoints: [\"127.0.0.1\"]\n{creds}"
            ),
            "contexts",
            0,
            &["a?]0;owned?"],
        ),
        case(
            "talos duplicate context",
            Talos,
            format!(
                "contexts:\n  a:\n    endpoints: [\"127.0.0.1\"]\n{creds}  a:\n    endpoints: [\"127.0.0.2\"]\n{creds}"
            ),
            "contexts",
            0,
            &["{file}", "defined twice"],
        ),
        case(
            "talos status no endpoints",
            Talos,
            format!("contexts:\n  a:\n    endpoints: []\n{creds}"),
            "status",
            2,
            &["a"],
        ),
        case(
            "talos status bad endpoint only",
            Talos,
            format!(
                "contexts:\n  a:\n    endpoints: [\"bad endpoint\"]\n    nodes: [\"127.0.0.1\"]\n{creds}"
            ),
            "status",
            2,
            &["a", "not a valid host:port"],
        ),
        case(
            "talos status unknown context",
            Talos,
            format!("contexts:\n  a:\n    endpoints: [\"127.0.0.1\"]\n{creds}"),
            "status --context nope",
            2,
            &["nope"],
        ),
        case(
            "talos empty file",
            Talos,
            "",
            "status",
            2,
            &["no talosconfig context"],
        ),
        case(
            "talos only comments",
            Talos,
            "# nothing\n",
            "contexts",
            0,
            &[],
        ),
        case(
            "kube yaml syntax",
            Kube,
            "apiVersion: v1\nclusters: [\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "kube contexts wrong type",
            Kube,
            "contexts: 7\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "kube deep nesting",
            Kube,
            format!("clusters: {nested}\n"),
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "kube billion laughs",
            Kube,
            laughs.clone(),
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "kube binary",
            Kube,
            "\u{0}\u{7f}\u{1b}[2J",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "kube undefined cluster",
            Kube,
            "contexts:\n- name: k\n  context: {cluster: nope, user: u}\n",
            "contexts",
            0,
            &["{file}", "nope"],
        ),
        case(
            "kube undefined user",
            Kube,
            "clusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\ncontexts:\n- name: k\n  context: {cluster: c, user: ghost}\n",
            "contexts",
            0,
            &["{file}", "ghost"],
        ),
        case(
            "kube current context undefined",
            Kube,
            "current-context: ghost\n",
            "contexts",
            2,
            &["{file}", "ghost"],
        ),
        case(
            "kube duplicate context",
            Kube,
            "contexts:\n- name: k\n  context: {cluster: c, user: u}\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\nusers:\n- name: u\n  user: {token: t}\n",
            "contexts",
            0,
            &["{file}", "defined twice"],
        ),
        case(
            "kube escape in context name",
            Kube,
            kube("    token: t\n").replace("name: k", "name: \"k\\e]2;title\\a\""),
            "contexts",
            0,
            &["k?]2;title?"],
        ),
        case(
            "kube exec plugin missing",
            Kube,
            kube(
                "    exec: {command: /nonexistent/plugin, apiVersion: client.authentication.k8s.io/v1}\n",
            ),
            "contexts",
            0,
            &["k"],
        ),
        case(
            "config yaml syntax",
            Config,
            "clusters: [1, 2\n",
            "contexts",
            2,
            &["{file}", "line"],
        ),
        case(
            "config clusters wrong type",
            Config,
            "clusters: 3\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config pairing wrong type",
            Config,
            "clusters:\n  prod: [1]\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config provider bad protocol",
            Config,
            "providers:\n  lab:\n    protocol: carrier-pigeon\n    endpoint: http://127.0.0.1:1\n",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config deep nesting",
            Config,
            format!("clusters: {nested}\n"),
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config billion laughs",
            Config,
            laughs,
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config binary",
            Config,
            "\u{0}\u{0}\u{0}",
            "contexts",
            2,
            &["{file}"],
        ),
        case(
            "config unknown talos context",
            Config,
            "clusters:\n  prod:\n    talos_context: ghost\n",
            "contexts",
            2,
            &["ghost"],
        ),
        case(
            "args status timeout zero",
            Args,
            "--timeout 0",
            "status",
            2,
            &["--timeout"],
        ),
        case(
            "args status timeout huge",
            Args,
            "--timeout 18446744073709551615",
            "status",
            2,
            &["--timeout"],
        ),
        case(
            "args status timeout text",
            Args,
            "--timeout soon",
            "status",
            2,
            &["--timeout"],
        ),
        case(
            "args output yaml",
            Args,
            "--output yaml",
            "status",
            2,
            &["--output"],
        ),
        case(
            "args refresh zero",
            Args,
            "--refresh 0",
            "contexts",
            2,
            &["--refresh"],
        ),
        case(
            "args node timeout u64 max",
            Args,
            "--to v1.12.0 --node-timeout 18446744073709551615",
            "upgrade",
            2,
            &["--node-timeout"],
        ),
        case(
            "args node timeout over a day",
            Args,
            "--to v1.12.0 --node-timeout 86401",
            "upgrade",
            2,
            &["--node-timeout"],
        ),
        case(
            "args node timeout zero",
            Args,
            "--to v1.12.0 --node-timeout 0",
            "upgrade",
            2,
            &["--node-timeout"],
        ),
        case(
            "args image garbage",
            Args,
            "--to v1.12.0 --image not/an/Image!",
            "upgrade",
            2,
            &["--image", "not an image reference", "lowercase"],
        ),
        case(
            "args image with a bad tag",
            Args,
            "--to v1.12.0 --image ghcr.io/siderolabs/installer:-v1",
            "upgrade",
            2,
            &["--image", "not a tag"],
        ),
        case(
            "args upgrade without target",
            Args,
            "",
            "upgrade",
            2,
            &["--to"],
        ),
        case(
            "args unknown subcommand",
            Args,
            "",
            "explode",
            2,
            &["explode"],
        ),
        case(
            "args missing talosconfig file",
            Args,
            "--talosconfig /nonexistent/talosconfig",
            "status",
            2,
            &["/nonexistent/talosconfig"],
        ),
        case(
            "args missing kubeconfig file",
            Args,
            "--kubeconfig /nonexistent/kubeconfig",
            "contexts",
            2,
            &["/nonexistent/kubeconfig"],
        ),
        case(
            "args missing config file",
            Args,
            "--config /nonexistent/taloscope.yaml",
            "contexts",
            2,
            &["/nonexistent/taloscope.yaml"],
        ),
        case(
            "args directory as talosconfig",
            Args,
            "--talosconfig /",
            "status",
            2,
            &["a directory"],
        ),
        case(
            "args dev zero as kubeconfig",
            Args,
            "--kubeconfig /dev/zero",
            "contexts",
            2,
            &["/dev/zero", "character device"],
        ),
        case(
            "args dev zero as config",
            Args,
            "--config /dev/zero",
            "contexts",
            2,
            &["/dev/zero", "character device"],
        ),
        case(
            "args dev null as talosconfig",
            Args,
            "--talosconfig /dev/null",
            "status",
            2,
            &["/dev/null", "character device"],
        ),
    ];
    // A file over the 16 MiB cap, in each slot.
    let big = "#".repeat(17 * 1024 * 1024);
    for slot in [Talos, Kube, Config] {
        v.push(case(
            "file over 16 MiB",
            slot,
            big.clone(),
            "contexts",
            2,
            &["{file}", "16 MiB"],
        ));
    }
    v
}
