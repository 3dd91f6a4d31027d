//! `taloscope contexts`: runs discovery and prints the clusters found and the
//! problems met, as a table or as the JSON contract. Exit 2 only when there
//! were errors and not a single cluster.
use std::process::ExitCode;

use crate::cli::{GlobalArgs, OutputFormat};
use crate::discovery::report::{self, ContextsReport};
use crate::discovery::{Discovery, where_looked};
use crate::paths::Paths;

pub fn run(global: &GlobalArgs, output: OutputFormat) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let discovery =
        super::session::discovered(global, &Paths::resolve(global.state_dir.as_deref()));
    let found = ContextsReport::new(&discovery);
    let printed = super::exit::print_report(output, &found, |_| {
        let mut text = report::table(&discovery);
        if discovery.clusters.is_empty() {
            text.push_str(&nothing_found(global, &env));
        }
        text
    });
    match printed {
        Ok(()) => exit_code(&discovery),
        Err(stop) => super::exit::exit_code(Err(stop)),
    }
}

/// Where discovery looked, after "No clusters found.": the operator's next question.
fn nothing_found(global: &GlobalArgs, env: &dyn Fn(&str) -> Option<String>) -> String {
    let paths = Paths::resolve(global.state_dir.as_deref());
    let looked = where_looked(&global.source_overrides(), env, &paths);
    let mut text = String::from("Looked in:\n");
    for line in looked {
        text.push_str(&format!("  {}\n", crate::printable::line(&line)));
    }
    text.push_str(
        "Name your files with --kubeconfig and --talosconfig, or KUBECONFIG and TALOSCONFIG.\n",
    );
    text
}

fn exit_code(discovery: &Discovery) -> ExitCode {
    if discovery.clusters.is_empty() && !discovery.errors.is_empty() {
        ExitCode::from(super::exit::EXIT_USAGE)
    } else {
        ExitCode::SUCCESS
    }
}
