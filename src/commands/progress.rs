//! The one progress printer of every mutating command: a table line stamped with its local
//! time, without anything a terminal would act on (it carries names read from the network), or
//! a JSON line `{"event", "time", "data"}` with the time and its UTC offset; the one runner's
//! events (each line with its step's elapsed time and timeout) and a domain runner's own.
use serde::Serialize;

use super::exit::print_line;
use crate::cli::OutputFormat;
use crate::clock::{Zone, unix_now};
use crate::operation::OperationEvent;

/// Prints one progress event now: `line` for a table, `kind` and `value` for JSON.
pub(super) fn print_progress<T: Serialize>(
    output: OutputFormat,
    kind: &str,
    value: &T,
    line: &str,
) {
    print_line(&progress_text(
        output,
        kind,
        value,
        line,
        (Zone::System, unix_now()),
    ));
}

/// The one runner's events as printed, each line with its step's elapsed time and timeout:
/// stamped on stdout for a table; for JSON, a `json_kind` line on stdout when stdout carries
/// the run's progress, else (`None`: stdout carries its outcome) the line on stderr.
pub(super) fn progress_printer(
    output: OutputFormat,
    json_kind: Option<&'static str>,
) -> impl Fn(OperationEvent) + Send + Sync {
    move |event: OperationEvent| {
        let line = event.line();
        match (output, json_kind) {
            (OutputFormat::Json, None) => eprintln!("{}", crate::printable::line(&line)),
            (_, kind) => print_progress(output, kind.unwrap_or("progress"), &event.text(), &line),
        }
    }
}

/// A runner's own event as printed: its JSON kind, its data and its table line.
pub(super) type Told = (&'static str, serde_json::Value, String);

/// Prints a runner's own events as they come, until every sender is gone: each as `tell` words
/// it, or not at all (`None`).
pub(super) fn print_events<E: Send + 'static>(
    mut events: impl futures::Stream<Item = E> + Send + Unpin + 'static,
    output: OutputFormat,
    mut tell: impl FnMut(&E) -> Option<Told> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(event) = futures::StreamExt::next(&mut events).await {
            if let Some((kind, data, line)) = tell(&event) {
                print_progress(output, kind, &data, &line);
            }
        }
    })
}

/// `value` as the data of a JSON progress line.
pub(super) fn data(value: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_else(|e| serde_json::Value::String(e.to_string()))
}

/// The progress line [`print_progress`] prints, at `at`.
pub(super) fn progress_text<T: Serialize>(
    output: OutputFormat,
    kind: &str,
    value: &T,
    line: &str,
    (zone, unix): (Zone, u64),
) -> String {
    match output {
        OutputFormat::Table => stamped(zone, unix, &crate::printable::line(line)),
        // Its time with the UTC offset: "2026-11-30T16:20:57+01:00".
        OutputFormat::Json => {
            let line =
                serde_json::json!({"event": kind, "time": zone.timestamp(unix), "data": value});
            serde_json::to_string(&line)
                .unwrap_or_else(|e| format!("{{\"event\":\"error\",\"data\":\"{e}\"}}"))
        }
    }
}

/// A progress line as printed: its local time first, "15:20:57 [2/5] cp-2: rebooting".
pub fn stamped(zone: Zone, unix: u64, line: &str) -> String {
    format!("{} {line}", zone.time_of_day(unix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_line_is_stamped_and_printable_and_json_carries_its_offset() {
        let at = (Zone::Fixed(3600), 1_796_052_057);
        let table = progress_text(
            OutputFormat::Table,
            "vm",
            &"x",
            "VM 41\u{1b}[2J created",
            at,
        );
        assert_eq!(
            table,
            format!(
                "{} VM 41?[2J created",
                Zone::Fixed(3600).time_of_day(1_796_052_057)
            )
        );
        let json = progress_text(OutputFormat::Json, "note", &"VM 41 created", "", at);
        let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(value["event"], "note");
        assert_eq!(value["time"], "2026-11-30T16:20:57+01:00");
        assert_eq!(value["data"], "VM 41 created");
    }

    #[test]
    fn progress_lines_start_with_their_local_time() {
        let line = "[2/5] talos-cp-2: rebooting";
        let t = 1_796_052_057; // 15:20:57 UTC
        assert_eq!(
            stamped(Zone::Fixed(3600), t, line),
            "16:20:57 [2/5] talos-cp-2: rebooting"
        );
        assert_eq!(
            stamped(Zone::Utc, t, line),
            "15:20:57 [2/5] talos-cp-2: rebooting"
        );
    }
}
