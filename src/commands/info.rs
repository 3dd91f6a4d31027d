//! `taloscope info`: where taloscope looks and writes (kubeconfig and
//! talosconfig files, config file, config/state dirs, log and audit files),
//! which theme it uses, and what it detected about the terminal.
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::GlobalArgs;
use crate::discovery::{Sources, with_presence};
use crate::logging;
use crate::paths::Paths;
use crate::tui::{Caps, Theme, ThemeSource};

pub fn run(global: &GlobalArgs) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let stdout_tty = std::io::stdout().is_terminal();
    let size = if stdout_tty {
        crossterm::terminal::size().ok()
    } else {
        None
    };
    let paths = Paths::resolve(global.state_dir.as_deref());
    print!("{}", render(global, &env, paths, stdout_tty, size));
    ExitCode::SUCCESS
}

fn file_list(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return "none found".to_string();
    }
    files
        .iter()
        .map(|f| with_presence(f))
        .collect::<Vec<_>>()
        .join("\n                     ")
}

/// What `info` prints, `env` the variables detection reads (shown for the operator to check).
pub fn render(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    paths: Paths,
    stdout_tty: bool,
    size: Option<(u16, u16)>,
) -> String {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    let (sources, source_errors) = Sources::resolve(&global.source_overrides(), env, &paths);
    let (theme, theme_error) = Theme::load(global.look.theme.as_deref(), &paths.user_themes_dir());
    let caps = Caps::detect(env, global.color, global.look.ascii);
    let mut out = String::new();
    let mut row = |label: &str, value: String| {
        out.push_str(&format!("{label:<20} {value}\n"));
    };
    row("kubeconfig files:", file_list(&sources.kubeconfigs));
    row("talosconfig files:", file_list(&sources.talosconfigs));
    row(
        "config file:",
        match &sources.config_file {
            Some(f) => with_presence(f),
            None => format!(
                "{} (not present; optional)",
                paths.default_config_file().display()
            ),
        },
    );
    row("config dir:", paths.config_dir.display().to_string());
    row(
        "user themes dir:",
        paths.user_themes_dir().display().to_string(),
    );
    row("state dir:", paths.state_dir.display().to_string());
    let log_file = logging::current_log_file(&paths.log_dir());
    row("log file:", log_file.display().to_string());
    row("audit log:", paths.audit_log().display().to_string());
    let source = match &theme.source {
        ThemeSource::Builtin => "built-in".to_string(),
        ThemeSource::File(p) => p.display().to_string(),
    };
    row("theme:", format!("{} ({source})", theme.name));
    if let Some(err) = &theme_error {
        row("theme error:", err.to_string());
    }
    let shown = |name: &str| non_empty(name).unwrap_or_else(|| "unset".to_string());
    row(
        "colour:",
        format!(
            "{} (TERM={}, COLORTERM={})",
            caps.color.label(),
            shown("TERM"),
            shown("COLORTERM")
        ),
    );
    row(
        "NO_COLOR:",
        if caps.no_color_env {
            "set: no colours, bold and reverse kept".to_string()
        } else {
            "not set".to_string()
        },
    );
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|n| non_empty(n).map(|v| format!("{n}={v}")))
        .unwrap_or_else(|| "no LC_ALL, LC_CTYPE or LANG".to_string());
    row(
        "glyphs:",
        format!("{} ({locale})", if caps.utf8 { "UTF-8" } else { "ASCII" }),
    );
    row(
        "terminal size:",
        match (stdout_tty, size) {
            (true, Some((w, h))) => format!("{w}x{h} (the console needs at least 80x24)"),
            (true, None) => "unknown".to_string(),
            (false, _) => "stdout is not a terminal".to_string(),
        },
    );
    for err in &source_errors {
        row("config error:", err.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::ColorMode;

    #[test]
    fn prints_files_dirs_theme_and_caps() {
        let dir = tempfile::tempdir().unwrap();
        let kube = dir.path().join("kube.yaml");
        std::fs::write(&kube, "apiVersion: v1\nkind: Config\n").unwrap();
        let kube_list = format!("{}:{}/gone.yaml", kube.display(), dir.path().display());
        let env = move |name: &str| -> Option<String> {
            match name {
                "KUBECONFIG" => Some(kube_list.clone()),
                "TERM" => Some("xterm-256color".into()),
                "NO_COLOR" => Some("1".into()),
                "LANG" => Some("C".into()),
                _ => None,
            }
        };
        let paths = Paths {
            config_dir: dir.path().join("config"),
            state_dir: dir.path().join("state"),
        };
        let global = GlobalArgs {
            look: crate::cli::LookArgs {
                theme: Some("light".into()),
                ascii: false,
            },
            color: ColorMode::Auto,
            ..GlobalArgs::default()
        };
        let text = render(&global, &env, paths, false, None);
        let line = |label: &str| {
            text.lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in\n{text}"))
                .to_string()
        };
        assert!(line("kubeconfig files:").ends_with(&kube.display().to_string()));
        assert!(text.contains("gone.yaml (missing)"), "{text}");
        assert!(line("state dir:").ends_with("/state"));
        assert!(line("log file:").contains("/state/logs/taloscope.log."));
        assert!(line("theme:").ends_with("light (built-in)"));
        assert!(line("colour:").contains("none (TERM=xterm-256color"));
        assert!(line("NO_COLOR:").contains("set"));
        assert!(line("glyphs:").contains("ASCII (LANG=C)"));
        assert!(line("terminal size:").contains("not a terminal"));
    }
}
