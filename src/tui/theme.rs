//! Themes: YAML files mapping semantic roles (ok, warn, error, selection…) to
//! styles. Built-in themes are embedded in the binary; user themes live in the
//! XDG config dir. Resolution against [`Caps`] strips or degrades colours.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use super::caps::{Caps, ColorDepth};

/// What a piece of the screen means; themes give each role a style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Text,
    Muted,
    Accent,
    Ok,
    Warn,
    Error,
    Selection,
    Header,
    Border,
    Title,
    Key,
    ReadOnly,
    Popup,
    Input,
}

impl Role {
    pub const ALL: [Role; 14] = [
        Role::Text,
        Role::Muted,
        Role::Accent,
        Role::Ok,
        Role::Warn,
        Role::Error,
        Role::Selection,
        Role::Header,
        Role::Border,
        Role::Title,
        Role::Key,
        Role::ReadOnly,
        Role::Popup,
        Role::Input,
    ];

    /// The role's key in a theme file.
    pub fn key(self) -> &'static str {
        match self {
            Role::Text => "text",
            Role::Muted => "muted",
            Role::Accent => "accent",
            Role::Ok => "ok",
            Role::Warn => "warn",
            Role::Error => "error",
            Role::Selection => "selection",
            Role::Header => "header",
            Role::Border => "border",
            Role::Title => "title",
            Role::Key => "key",
            Role::ReadOnly => "readonly",
            Role::Popup => "popup",
            Role::Input => "input",
        }
    }

    fn from_key(key: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.key() == key)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The built-in themes, embedded so the binary works from any directory.
pub const BUILTIN_THEMES: [(&str, &str); 4] = [
    ("default", include_str!("../../themes/default.yaml")),
    ("light", include_str!("../../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.yaml"),
    ),
    ("mono", include_str!("../../themes/mono.yaml")),
];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ThemeError {
    #[error("theme {name:?}: no such theme (built-in: {builtin}; user themes: {dir}/NAME.yaml); using the default theme", builtin = builtin_names(), dir = dir.display())]
    Unknown { name: String, dir: PathBuf },
    #[error("theme file {}: cannot read: {message}; using the default theme", path.display())]
    Read { path: PathBuf, message: String },
    #[error("theme file {}: {message}; using the default theme", path.display())]
    Parse { path: PathBuf, message: String },
}

fn builtin_names() -> String {
    BUILTIN_THEMES.map(|(n, _)| n).join(", ")
}

/// Where a theme came from, for `taloscope info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThemeSource {
    Builtin,
    File(PathBuf),
}

/// One role as written in a theme file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    reverse: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    #[serde(default)]
    description: Option<String>,
    roles: BTreeMap<String, RoleSpec>,
}

/// A loaded theme: a style per role, colours as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    pub source: ThemeSource,
    pub description: Option<String>,
    styles: Vec<Style>,
}

impl Theme {
    /// The built-in default: 16 ANSI colours on the terminal's own background.
    pub fn default_theme() -> Theme {
        let (name, text) = BUILTIN_THEMES[0];
        // The embedded default is checked by a unit test; an empty theme is the
        // last resort so this never panics.
        parse_theme(name, text, None, Path::new("themes/default.yaml")).unwrap_or(Theme {
            name: name.to_string(),
            source: ThemeSource::Builtin,
            description: None,
            styles: vec![Style::default(); Role::ALL.len()],
        })
    }

    /// Loads theme `name` (default when `None`): a user theme file
    /// `<user_dir>/NAME.yaml` wins over a built-in of the same name. Any
    /// problem yields the default theme and an error to show the operator.
    pub fn load(name: Option<&str>, user_dir: &Path) -> (Theme, Option<ThemeError>) {
        let name = name.unwrap_or("default");
        match Theme::try_load(name, user_dir) {
            Ok(theme) => (theme, None),
            Err(err) => (Theme::default_theme(), Some(err)),
        }
    }

    fn try_load(name: &str, user_dir: &Path) -> Result<Theme, ThemeError> {
        let safe = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if safe {
            let path = user_dir.join(format!("{name}.yaml"));
            match crate::bounded::read_to_string(&path, crate::bounded::CONFIG_FILE_LIMIT) {
                Ok(text) => {
                    let base = Theme::default_theme();
                    return parse_theme(name, &text, Some(&base), &path).map(|mut t| {
                        t.source = ThemeSource::File(path.clone());
                        t
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(ThemeError::Read {
                        path,
                        message: e.to_string(),
                    });
                }
            }
        }
        match BUILTIN_THEMES.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => {
                let label = PathBuf::from(format!("themes/{n}.yaml"));
                parse_theme(n, text, None, &label)
            }
            None => Err(ThemeError::Unknown {
                name: name.to_string(),
                dir: user_dir.to_path_buf(),
            }),
        }
    }

    /// The style of `role` as written in the theme (no capability applied).
    pub fn style(&self, role: Role) -> Style {
        self.styles.get(role.index()).copied().unwrap_or_default()
    }

    /// The styles to draw with on a terminal with `caps`.
    pub fn resolve(&self, caps: &Caps) -> Styles {
        let styles = Role::ALL
            .iter()
            .map(|&role| resolve_style(self.style(role), role, caps.color))
            .collect();
        Styles { styles }
    }
}

/// Parses a theme file. Roles it leaves out come from `base` (user themes) or
/// stay plain (built-ins, which define every role).
fn parse_theme(
    name: &str,
    text: &str,
    base: Option<&Theme>,
    path: &Path,
) -> Result<Theme, ThemeError> {
    let parse_err = |message: String| ThemeError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let file: ThemeFile = serde_saphyr::from_str(text).map_err(|e| parse_err(e.to_string()))?;
    let mut styles: Vec<Style> = match base {
        Some(b) => Role::ALL.iter().map(|&r| b.style(r)).collect(),
        None => vec![Style::default(); Role::ALL.len()],
    };
    for (key, spec) in &file.roles {
        let role = Role::from_key(key).ok_or_else(|| {
            let known: Vec<&str> = Role::ALL.iter().map(|r| r.key()).collect();
            parse_err(format!(
                "unknown role {key:?} (roles: {})",
                known.join(", ")
            ))
        })?;
        styles[role.index()] =
            spec_style(spec).map_err(|m| parse_err(format!("role {key}: {m}")))?;
    }
    Ok(Theme {
        name: name.to_string(),
        source: ThemeSource::Builtin,
        description: file.description,
        styles,
    })
}

fn spec_style(spec: &RoleSpec) -> Result<Style, String> {
    let color = |c: &Option<String>| -> Result<Option<Color>, String> {
        match c {
            None => Ok(None),
            Some(text) => Color::from_str(text).map(Some).map_err(|_| {
                format!(
                    "{text:?} is not a colour (a name such as red or light-blue, #rrggbb, or 0-255)"
                )
            }),
        }
    };
    let mut style = Style::default();
    if let Some(fg) = color(&spec.fg)? {
        style = style.fg(fg);
    }
    if let Some(bg) = color(&spec.bg)? {
        style = style.bg(bg);
    }
    let flags = [
        (spec.bold, Modifier::BOLD),
        (spec.dim, Modifier::DIM),
        (spec.italic, Modifier::ITALIC),
        (spec.underline, Modifier::UNDERLINED),
        (spec.reverse, Modifier::REVERSED),
    ];
    for (on, m) in flags {
        if on {
            style = style.add_modifier(m);
        }
    }
    Ok(style)
}

/// Styles resolved for one terminal: what views draw with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Styles {
    styles: Vec<Style>,
}

impl Styles {
    pub fn get(&self, role: Role) -> Style {
        self.styles.get(role.index()).copied().unwrap_or_default()
    }
}

fn resolve_style(style: Style, role: Role, depth: ColorDepth) -> Style {
    let mut out = style;
    out.fg = style.fg.and_then(|c| degrade(c, depth));
    out.bg = style.bg.and_then(|c| degrade(c, depth));
    // Without colour the selection must still stand out: reverse video.
    if depth == ColorDepth::None && role == Role::Selection {
        out = out.add_modifier(Modifier::REVERSED);
    }
    out
}

/// Maps a colour to what the terminal can show; `None` strips it.
pub fn degrade(color: Color, depth: ColorDepth) -> Option<Color> {
    match (depth, color) {
        (ColorDepth::None, _) => None,
        (ColorDepth::TrueColor, c) => Some(c),
        (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Some(Color::Indexed(rgb_to_256(r, g, b))),
        (ColorDepth::Ansi256, c) => Some(c),
        (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => Some(nearest_ansi16((r, g, b))),
        (ColorDepth::Ansi16, Color::Indexed(i)) if i >= 16 => {
            Some(nearest_ansi16(indexed_to_rgb(i)))
        }
        (ColorDepth::Ansi16, Color::Indexed(i)) => Some(ANSI16[i as usize].0),
        (ColorDepth::Ansi16, c) => Some(c),
    }
}

/// The number (0-15) of one of the 16 named colours.
pub fn ansi16_index(color: Color) -> Option<u8> {
    ANSI16
        .iter()
        .position(|(c, _)| *c == color)
        .and_then(|i| u8::try_from(i).ok())
}

/// xterm's default 16-colour palette.
const ANSI16: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn nearest_ansi16(rgb: (u8, u8, u8)) -> Color {
    let dist = |(r, g, b): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(r, rgb.0) + d(g, rgb.1) + d(b, rgb.2)
    };
    ANSI16
        .iter()
        .min_by_key(|(_, c)| dist(*c))
        .map(|(c, _)| *c)
        .unwrap_or(Color::Reset)
}

fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

fn indexed_to_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[i as usize].1,
        16..=231 => {
            let i = i - 16;
            let v = |x: u8| if x == 0 { 0 } else { 55 + 40 * x };
            (v(i / 36), v((i / 6) % 6), v(i % 6))
        }
        _ => {
            let g = 8 + 10 * (i - 232);
            (g, g, g)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(color: ColorDepth) -> Caps {
        Caps {
            color,
            no_color_env: false,
            utf8: true,
        }
    }

    #[test]
    fn builtin_themes_parse_and_define_every_role() {
        for (name, text) in BUILTIN_THEMES {
            let file: ThemeFile = serde_saphyr::from_str(text)
                .unwrap_or_else(|e| panic!("built-in theme {name}: {e}"));
            for role in Role::ALL {
                assert!(
                    file.roles.contains_key(role.key()),
                    "theme {name} lacks role {}",
                    role.key()
                );
            }
            let theme = parse_theme(name, text, None, Path::new(name)).unwrap();
            assert_eq!(theme.name, name);
        }
    }

    #[test]
    fn user_theme_overrides_and_inherits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("night.yaml"),
            "roles:\n  ok: { fg: '#00ff00', bold: true }\n",
        )
        .unwrap();
        let (theme, err) = Theme::load(Some("night"), dir.path());
        assert_eq!(err, None);
        assert_eq!(theme.name, "night");
        assert_eq!(
            theme.source,
            ThemeSource::File(dir.path().join("night.yaml"))
        );
        assert_eq!(theme.style(Role::Ok).fg, Some(Color::Rgb(0, 255, 0)));
        assert_eq!(
            theme.style(Role::Error),
            Theme::default_theme().style(Role::Error)
        );
    }

    #[test]
    fn bad_theme_file_names_the_file_and_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.yaml");
        std::fs::write(&path, "roles:\n  ok: { fg: [unclosed\n").unwrap();
        let (theme, err) = Theme::load(Some("broken"), dir.path());
        assert_eq!(theme, Theme::default_theme());
        let msg = err.expect("an error").to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("using the default theme"), "{msg}");

        std::fs::write(&path, "roles:\n  okay: { fg: red }\n").unwrap();
        let msg = Theme::load(Some("broken"), dir.path())
            .1
            .unwrap()
            .to_string();
        assert!(msg.contains("unknown role \"okay\""), "{msg}");

        std::fs::write(&path, "roles:\n  ok: { fg: chartreuse-ish }\n").unwrap();
        let msg = Theme::load(Some("broken"), dir.path())
            .1
            .unwrap()
            .to_string();
        assert!(
            msg.contains("role ok") && msg.contains("not a colour"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_theme_falls_back_to_default() {
        let dir = tempfile::tempdir().unwrap();
        let (theme, err) = Theme::load(Some("../etc/passwd"), dir.path());
        assert_eq!(theme.name, "default");
        assert!(matches!(err, Some(ThemeError::Unknown { .. })));
        let (theme, err) = Theme::load(Some("mono"), dir.path());
        assert_eq!((theme.name.as_str(), err), ("mono", None));
    }

    #[test]
    fn no_colour_keeps_modifiers_and_reverses_selection() {
        let theme = Theme::default_theme();
        let styles = theme.resolve(&caps(ColorDepth::None));
        for role in Role::ALL {
            let s = styles.get(role);
            assert_eq!((s.fg, s.bg), (None, None), "role {}", role.key());
            assert_eq!(
                s.add_modifier & theme.style(role).add_modifier,
                theme.style(role).add_modifier
            );
        }
        assert!(
            styles
                .get(Role::Selection)
                .add_modifier
                .contains(Modifier::REVERSED)
        );
    }

    #[test]
    fn colours_degrade_to_what_the_terminal_shows() {
        assert_eq!(
            degrade(Color::Rgb(250, 10, 10), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(
            degrade(Color::Rgb(0, 0, 0), ColorDepth::Ansi256),
            Some(Color::Indexed(16))
        );
        assert_eq!(
            degrade(Color::Rgb(255, 255, 255), ColorDepth::Ansi256),
            Some(Color::Indexed(231))
        );
        assert_eq!(
            degrade(Color::Indexed(196), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(
            degrade(Color::Green, ColorDepth::Ansi16),
            Some(Color::Green)
        );
        assert_eq!(
            degrade(Color::Rgb(1, 2, 3), ColorDepth::TrueColor),
            Some(Color::Rgb(1, 2, 3))
        );
    }
}
