//! Terminal capabilities: colour depth, NO_COLOR, UTF-8 or ASCII, read from an
//! injected environment so detection is testable. Flags (`--color`, `--ascii`)
//! override what the environment says.

/// When to use colour (`--color`): `auto` follows the terminal and NO_COLOR.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorMode {
    #[default]
    Auto,
    Always,
    Never,
}

/// How many colours the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ColorDepth {
    /// No colour at all (`TERM=dumb`, `--color never`, NO_COLOR).
    None,
    Ansi16,
    Ansi256,
    TrueColor,
}

impl ColorDepth {
    pub fn label(self) -> &'static str {
        match self {
            ColorDepth::None => "none",
            ColorDepth::Ansi16 => "16 colours",
            ColorDepth::Ansi256 => "256 colours",
            ColorDepth::TrueColor => "truecolor (24-bit)",
        }
    }
}

/// What the console may use when drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Colour depth after NO_COLOR and `--color` were applied.
    pub color: ColorDepth,
    /// NO_COLOR was set (non-empty) in the environment.
    pub no_color_env: bool,
    /// The locale says UTF-8 and `--ascii` was not given.
    pub utf8: bool,
}

impl Caps {
    /// Detects capabilities from `env` (a lookup such as `std::env::var`),
    /// then applies `--color` and `--ascii`.
    pub fn detect(env: &dyn Fn(&str) -> Option<String>, color: ColorMode, ascii: bool) -> Caps {
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
        let no_color_env = non_empty("NO_COLOR").is_some();
        let depth = terminal_depth(
            non_empty("COLORTERM").as_deref(),
            non_empty("TERM").as_deref(),
        );
        let color = match color {
            ColorMode::Never => ColorDepth::None,
            // The operator asked for colour: at least the 16 ANSI colours.
            ColorMode::Always => depth.max(ColorDepth::Ansi16),
            ColorMode::Auto if no_color_env => ColorDepth::None,
            ColorMode::Auto => depth,
        };
        // LC_ALL, then LC_CTYPE, then LANG: the first non-empty one decides.
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|name| non_empty(name))
            .unwrap_or_default();
        let utf8 = !ascii && locale_is_utf8(&locale);
        Caps {
            color,
            no_color_env,
            utf8,
        }
    }

    /// Whether any colour reaches the frame.
    pub fn colors(&self) -> bool {
        self.color != ColorDepth::None
    }
}

fn terminal_depth(colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
    if let Some(ct) = colorterm {
        let ct = ct.to_ascii_lowercase();
        if ct == "truecolor" || ct == "24bit" {
            return ColorDepth::TrueColor;
        }
    }
    match term {
        None => ColorDepth::None,
        Some("dumb") => ColorDepth::None,
        Some(t) if t.contains("truecolor") || t.contains("direct") => ColorDepth::TrueColor,
        Some(t) if t.contains("256color") => ColorDepth::Ansi256,
        Some(_) => ColorDepth::Ansi16,
    }
}

fn locale_is_utf8(locale: &str) -> bool {
    let l = locale.to_ascii_lowercase();
    l.contains("utf-8") || l.contains("utf8")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn detect(pairs: &[(&str, &str)], color: ColorMode, ascii: bool) -> Caps {
        Caps::detect(&env_of(pairs), color, ascii)
    }

    #[test]
    fn colour_depth_from_colorterm_and_term() {
        let auto = ColorMode::Auto;
        let truecolor = detect(
            &[("COLORTERM", "truecolor"), ("TERM", "xterm")],
            auto,
            false,
        );
        assert_eq!(truecolor.color, ColorDepth::TrueColor);
        let c24 = detect(&[("COLORTERM", "24bit"), ("TERM", "xterm")], auto, false);
        assert_eq!(c24.color, ColorDepth::TrueColor);
        let c256 = detect(&[("TERM", "xterm-256color")], auto, false);
        assert_eq!(c256.color, ColorDepth::Ansi256);
        assert_eq!(
            detect(&[("TERM", "xterm")], auto, false).color,
            ColorDepth::Ansi16
        );
        assert_eq!(
            detect(&[("TERM", "dumb")], auto, false).color,
            ColorDepth::None
        );
        assert_eq!(detect(&[], auto, false).color, ColorDepth::None);
    }

    #[test]
    fn no_color_strips_colour_unless_forced() {
        let env = [("TERM", "xterm-256color"), ("NO_COLOR", "1")];
        let caps = detect(&env, ColorMode::Auto, false);
        assert_eq!(caps.color, ColorDepth::None);
        assert!(caps.no_color_env);
        let forced = detect(&env, ColorMode::Always, false);
        assert_eq!(forced.color, ColorDepth::Ansi256);
        // An empty NO_COLOR does not count.
        let empty = detect(
            &[("TERM", "xterm"), ("NO_COLOR", "")],
            ColorMode::Auto,
            false,
        );
        assert_eq!(empty.color, ColorDepth::Ansi16);
        assert!(!empty.no_color_env);
    }

    #[test]
    fn color_flag_overrides_terminal() {
        let never = detect(&[("COLORTERM", "truecolor")], ColorMode::Never, false);
        assert_eq!(never.color, ColorDepth::None);
        let always = detect(&[("TERM", "dumb")], ColorMode::Always, false);
        assert_eq!(always.color, ColorDepth::Ansi16);
    }

    #[test]
    fn utf8_from_first_non_empty_locale_variable() {
        let a = ColorMode::Auto;
        assert!(detect(&[("LANG", "en_US.UTF-8")], a, false).utf8);
        assert!(detect(&[("LANG", "de_DE.utf8")], a, false).utf8);
        assert!(!detect(&[("LANG", "C")], a, false).utf8);
        assert!(!detect(&[], a, false).utf8);
        // LC_ALL wins over LANG, LC_CTYPE over LANG; empty ones are skipped.
        assert!(!detect(&[("LC_ALL", "C"), ("LANG", "en_US.UTF-8")], a, false).utf8);
        assert!(
            detect(
                &[("LC_ALL", ""), ("LC_CTYPE", "C.UTF-8"), ("LANG", "C")],
                a,
                false
            )
            .utf8
        );
        assert!(!detect(&[("LC_CTYPE", "POSIX"), ("LANG", "en_US.UTF-8")], a, false).utf8);
    }

    #[test]
    fn ascii_flag_forces_ascii() {
        assert!(!detect(&[("LANG", "en_US.UTF-8")], ColorMode::Auto, true).utf8);
    }
}
