//! What reaches the terminal, one frame at a time. The writer holds what is
//! written until the flush that ends a frame, then writes it in one piece as a
//! synchronized update (DEC mode 2026: tmux and most terminals show it whole,
//! never half drawn; terminals without it ignore the mode).
//!
//! On a 16-colour terminal it also rewrites the colours: crossterm writes
//! every colour, the 16 named ones too, as a 256-colour escape (`38;5;N`),
//! which terminals that report 16 colours (TERM=xterm, screen) may show wrong
//! or not at all; those escapes become the 16-colour codes (30-37, 90-97,
//! 40-47, 100-107).
use std::io::{self, Write};

use ratatui::style::Color;

use super::ColorDepth;
use super::theme::{ansi16_index, degrade};

/// Begins a synchronized update: the terminal holds what follows until the end.
pub const BEGIN_FRAME: &[u8] = b"\x1b[?2026h";
/// Ends a synchronized update: the terminal shows the frame.
pub const END_FRAME: &[u8] = b"\x1b[?2026l";

/// The console's output, a frame per flush: its colours as they are, or
/// rewritten to the 16-colour codes.
pub struct PaletteWriter<W: Write> {
    inner: W,
    sixteen: bool,
    frame: Vec<u8>,
}

impl<W: Write> PaletteWriter<W> {
    /// A writer for a terminal of `depth` colours.
    pub fn new(inner: W, depth: ColorDepth) -> PaletteWriter<W> {
        PaletteWriter {
            inner,
            sixteen: depth == ColorDepth::Ansi16,
            frame: Vec::new(),
        }
    }

    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

impl<W: Write> Write for PaletteWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.frame.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.frame.is_empty() {
            let frame = std::mem::take(&mut self.frame);
            let body = if self.sixteen {
                to_ansi16(&frame)
            } else {
                frame
            };
            let mut out = Vec::with_capacity(BEGIN_FRAME.len() + body.len() + END_FRAME.len());
            out.extend_from_slice(BEGIN_FRAME);
            out.extend_from_slice(&body);
            out.extend_from_slice(END_FRAME);
            self.inner.write_all(&out)?;
        }
        self.inner.flush()
    }
}

/// `bytes` with every SGR colour written in the 16-colour codes; underline
/// colours (which 16-colour terminals lack) are left out.
pub fn to_ansi16(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let params_end = (i + 2..bytes.len())
                .find(|k| !matches!(bytes[*k], b'0'..=b'9' | b';'))
                .unwrap_or(bytes.len());
            if bytes.get(params_end) == Some(&b'm') {
                let params = String::from_utf8_lossy(&bytes[i + 2..params_end]);
                let sgr = sgr_in_ansi16(&params);
                if !sgr.is_empty() {
                    out.extend_from_slice(format!("\x1b[{sgr}m").as_bytes());
                }
                i = params_end + 1;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// One SGR parameter list (`1;38;5;9`) with its colours in 16-colour codes.
fn sgr_in_ansi16(params: &str) -> String {
    let fields: Vec<&str> = params.split(';').collect();
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < fields.len() {
        let (layer, rest) = (fields[k], &fields[k + 1..]);
        let color = match (layer, rest) {
            ("38" | "48" | "58", ["5", n, ..]) => {
                k += 3;
                n.parse().ok().map(Color::Indexed)
            }
            ("38" | "48" | "58", ["2", r, g, b, ..]) => {
                k += 5;
                match (r.parse(), g.parse(), b.parse()) {
                    (Ok(r), Ok(g), Ok(b)) => Some(Color::Rgb(r, g, b)),
                    _ => None,
                }
            }
            _ => {
                out.push(layer.to_string());
                k += 1;
                continue;
            }
        };
        let index = color
            .and_then(|c| degrade(c, ColorDepth::Ansi16))
            .and_then(ansi16_index);
        match (layer, index) {
            ("38", Some(n)) if n < 8 => out.push((30 + n).to_string()),
            ("38", Some(n)) => out.push((90 + n - 8).to_string()),
            ("48", Some(n)) if n < 8 => out.push((40 + n).to_string()),
            ("48", Some(n)) => out.push((100 + n - 8).to_string()),
            _ => {}
        }
    }
    out.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_colours_become_16_colour_codes() {
        let frame = b"\x1b[1m\x1b[38;5;9mred\x1b[48;5;6m\x1b[38;5;0mx\x1b[58;5;3m\x1b[39;49m";
        let out = String::from_utf8(to_ansi16(frame)).unwrap();
        assert_eq!(out, "\x1b[1m\x1b[91mred\x1b[46m\x1b[30mx\x1b[39;49m");
        // Beyond 16 (a theme's own number) and 24-bit: the nearest of the 16.
        let far = String::from_utf8(to_ansi16(b"\x1b[38;5;196m\x1b[48;2;0;0;0m")).unwrap();
        assert_eq!(far, "\x1b[91m\x1b[40m");
        // Other escapes pass as they are.
        let moves = b"\x1b[2;5H\x1b[?25l";
        assert_eq!(to_ansi16(moves), moves.to_vec());
    }

    #[test]
    fn a_frame_is_rewritten_whole_even_when_written_in_pieces() {
        let mut w = PaletteWriter::new(Vec::new(), ColorDepth::Ansi16);
        for piece in [&b"\x1b["[..], b"38;", b"5;10", b"mok"] {
            w.write_all(piece).unwrap();
        }
        assert!(w.get_ref().is_empty(), "held until the frame is flushed");
        w.flush().unwrap();
        assert_eq!(w.get_ref().as_slice(), b"\x1b[?2026h\x1b[92mok\x1b[?2026l");
    }

    #[test]
    fn each_flush_is_one_synchronized_frame_and_an_empty_one_writes_nothing() {
        let mut w = PaletteWriter::new(Vec::new(), ColorDepth::Ansi256);
        w.write_all(b"\x1b[38;5;10m").unwrap();
        w.write_all(b"a").unwrap();
        assert!(w.get_ref().is_empty(), "held until the frame is flushed");
        w.flush().unwrap();
        w.flush().unwrap();
        assert_eq!(
            w.get_ref().as_slice(),
            b"\x1b[?2026h\x1b[38;5;10ma\x1b[?2026l",
            "colours as they are, one frame, nothing for the empty flush"
        );
    }
}
