//! `taloscope logs` and `taloscope dmesg`: one node's service, container or kernel log printed
//! line by line as it arrives (each line made printable and bounded by the Talos client), and
//! with --follow until the node closes the stream or the operator stops it. Read-only.
use std::process::ExitCode;

use futures::StreamExt;
use serde::Serialize;

use super::exit::{EXIT_BLOCKED, Stop, usage, write_while_read};
use super::session::read_cluster;
use crate::cli::{GlobalArgs, LogsArgs, NodeLogArgs, OutputFormat};
use crate::talos::{LogLine, LogOptions, LogSource, TalosClient};

/// One printed line as `--output json` writes it (one object per line).
#[derive(Serialize)]
struct JsonLine<'a> {
    node: &'a str,
    line: &'a str,
}

/// What to read, of which node, and how to print it.
struct LogRequest<'a> {
    node: &'a str,
    source: LogSource,
    options: LogOptions,
    output: OutputFormat,
}

pub(super) fn run_logs(global: &GlobalArgs, args: &LogsArgs) -> Result<ExitCode, Stop> {
    let source = LogSource::requested(&args.service, args.kubernetes);
    run(global, &args.stream, source, args.tail)
}

pub(super) fn run_dmesg(global: &GlobalArgs, args: &NodeLogArgs) -> Result<ExitCode, Stop> {
    run(global, args, LogSource::Kernel, None)
}

/// Prints `source` of the node `args` names: its last `tail` lines, else the whole log.
fn run(
    global: &GlobalArgs,
    args: &NodeLogArgs,
    source: LogSource,
    tail: Option<u32>,
) -> Result<ExitCode, Stop> {
    let request = LogRequest {
        node: &args.node,
        source,
        options: LogOptions {
            tail,
            follow: args.follow,
        },
        output: args.output,
    };
    let (_, code) = read_cluster(global, async |_, observer| {
        // An address as given; a name through the cluster's status (the model `status` shows).
        let address = match request.node.parse::<std::net::IpAddr>() {
            Ok(_) => request.node.to_string(),
            Err(_) => (observer.status().await.node_named(request.node))
                .map_err(usage)?
                .address
                .clone(),
        };
        if let LogSource::Service(id) = &request.source {
            check_service(&observer.talos, request.node, &address, id).await?;
        }
        print_log(&observer.talos, &address, request).await
    })?;
    Ok(code)
}

/// Refuses a service the node does not run: Talos would serve an empty log for it, and a
/// follow would wait forever.
async fn check_service(
    talos: &TalosClient,
    node: &str,
    address: &str,
    id: &str,
) -> Result<(), Stop> {
    let services = talos
        .service_list(address)
        .await
        .map_err(|e| failed(node, address, &e))?;
    if services.iter().any(|s| s.id == id) {
        return Ok(());
    }
    let ids: Vec<&str> = services.iter().map(|s| s.id.as_str()).collect();
    Err(usage(format!(
        "node {node} runs no service {id:?}; its services: {} (a Kubernetes container needs -k)",
        ids.join(", ")
    )))
}

async fn print_log(
    talos: &TalosClient,
    address: &str,
    request: LogRequest<'_>,
) -> Result<ExitCode, Stop> {
    let mut lines = talos
        .logs(address, &request.source, request.options)
        .await
        .map_err(|e| failed(request.node, address, &e))?;
    while let Some(item) = lines.next().await {
        let line = item.map_err(|e| failed(request.node, address, &e))?;
        // A closed stdout (`| head`) ends a follow.
        if !write_while_read(&printed(&line, request.node, request.output))? {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A failed call, naming the node as the operator did when that was not its address.
fn failed(node: &str, address: &str, error: &crate::talos::TalosError) -> Stop {
    if node == address {
        Stop(EXIT_BLOCKED, error.to_string())
    } else {
        Stop(EXIT_BLOCKED, format!("{node}: {error}"))
    }
}

/// A line as printed: its text, or a JSON object naming the node as the operator named it.
fn printed(line: &LogLine, node: &str, output: OutputFormat) -> String {
    match output {
        OutputFormat::Table => format!("{}\n", line.text),
        OutputFormat::Json => {
            let json = JsonLine {
                node,
                line: &line.text,
            };
            format!("{}\n", serde_json::to_string(&json).unwrap_or_default())
        }
    }
}
