//! How every headless command writes and ends: one writer to stdout, one table of exit codes,
//! one `Stop` that carries the code and the reason (also as JSON with `--output json`), so a
//! refusal reads and exits the same whatever the command. The approval itself is `gate`'s.
use std::io::Write;
use std::process::ExitCode;

use crate::cli::{GateArgs, OutputFormat};

/// Refused (read-only, a guard blocks), or not done (a node did not answer,
/// a VM did not join, a rollout did not finish).
pub(super) const EXIT_BLOCKED: u8 = 1;
/// A usage or configuration error: wrong flags, a `--confirm` that is not the
/// cluster's name, an unreadable config file. Nothing was changed.
pub(super) const EXIT_USAGE: u8 = 2;

/// A reason to stop, with its exit code; an empty reason prints nothing.
pub(super) struct Stop(pub(super) u8, pub(super) String);

pub(super) fn usage(message: impl Into<String>) -> Stop {
    Stop(EXIT_USAGE, message.into())
}

/// The exit code of a run; a stop says its reason on stderr first. The reason may carry text
/// from the network (a hostname) or the operator's own input: it is printed without anything
/// a terminal would act on.
pub(super) fn exit_code(result: Result<ExitCode, Stop>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(Stop(code, message)) => {
            if !message.is_empty() {
                eprintln!("taloscope: {}", crate::printable::lines(&message));
            }
            ExitCode::from(code)
        }
    }
}

/// The exit code of a run as `output` says it: with `--output json` a stop is also one JSON
/// line on stdout (`{"event":"stopped","data":{"exit_code":1,"message":"…"}}`), so a script
/// reading stdout reads JSON also when there was nothing to do or the run was refused.
pub(super) fn exit_code_as(result: Result<ExitCode, Stop>, output: OutputFormat) -> ExitCode {
    if output == OutputFormat::Json
        && let Err(Stop(code, message)) = &result
        && !message.is_empty()
    {
        let stopped = serde_json::json!({"event": "stopped", "data": {"exit_code": code, "message": message}});
        print_line(&stopped.to_string());
    }
    exit_code(result)
}

/// How a command with nothing to do ends: the reason on stdout for a `--plan` table, else a
/// stop with exit 0 (said on stderr, and as the JSON stop line with `--output json`).
pub(super) fn nothing_to_do(gate: &GateArgs, message: String) -> Result<ExitCode, Stop> {
    if gate.plan && gate.output == OutputFormat::Table {
        print_line(&crate::printable::line(&message));
        return Ok(ExitCode::SUCCESS);
    }
    Err(Stop(0, message))
}

/// The exit code of an outcome: 0, or 1 when `failed` (a guard blocks, an alarm is active, a
/// check failed, a run did not finish).
pub(super) fn exit_if(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(EXIT_BLOCKED)
    } else {
        ExitCode::SUCCESS
    }
}

/// `value` as pretty JSON with a last newline: what `--output json` prints.
pub(super) fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, Stop> {
    serde_json::to_string_pretty(value)
        .map(|j| j + "\n")
        .map_err(|e| {
            Stop(
                EXIT_BLOCKED,
                format!("cannot encode the output as JSON: {e}"),
            )
        })
}

/// Writes a command's report as `--output` says: its JSON, or its table (ending in a newline)
/// without anything a terminal would act on.
pub(super) fn print_report<T: serde::Serialize>(
    output: OutputFormat,
    report: &T,
    table: impl FnOnce(&T) -> String,
) -> Result<(), Stop> {
    match output {
        OutputFormat::Json => write_stdout(&json(report)?),
        OutputFormat::Table => write_stdout(&crate::printable::lines(&table(report))),
    }
}

/// Writes `text` to stdout, flushed; a closed pipe (`| head`) is not an error.
pub(super) fn write_stdout(text: &str) -> Result<(), Stop> {
    write_while_read(text).map(|_| ())
}

/// [`write_stdout`], saying whether stdout is still read: false once a pipe is closed.
pub(super) fn write_while_read(text: &str) -> Result<bool, Stop> {
    let mut stdout = std::io::stdout().lock();
    match (stdout.write_all(text.as_bytes())).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(Stop(EXIT_BLOCKED, format!("cannot write output: {e}"))),
    }
}

/// Writes `line` and a newline to stdout, flushed, for a run that goes on whether or not
/// anyone reads it.
pub(super) fn print_line(line: &str) {
    let _ = write_stdout(&format!("{line}\n"));
}
