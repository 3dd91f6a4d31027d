//! The certificates pane: one row per certificate of every cluster, soonest end first (mark,
//! days left, which certificate of which context, when it ends), the selected one's fix in
//! talosctl's words below. Scrolls to keep the selection in view.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use unicode_width::UnicodeWidthStr;

use super::{CertsScreen, fleet_certs};
use crate::fleet::FleetModel;
use crate::fleet::cert_expiry::{
    CertExpiry, ExpiryVerdict, WARN_DAYS, certificate_text, end_date, expires_text, renewal,
};
use crate::tui::{Look, Role};
use crate::views::fit;
use crate::views::table::titled;

/// The widest the certificate and context columns get; longer text is cut.
const MAX_COLUMN: usize = 26;
/// Rows of the fix box, borders included.
const FIX_ROWS: u16 = 6;

pub struct CertsPane<'a> {
    pub screen: &'a CertsScreen,
    pub fleet: &'a FleetModel,
    pub look: &'a Look,
}

impl CertsPane<'_> {
    fn mark(&self, c: &CertExpiry) -> (&'static str, Role) {
        let g = &self.look.glyphs;
        match c.verdict {
            ExpiryVerdict::Ok => (g.ok, Role::Ok),
            ExpiryVerdict::Warn => (g.warn, Role::Warn),
            ExpiryVerdict::Fail => (g.error, Role::Error),
        }
    }

    /// `12d`, `-3d` once expired, `?` when unreadable.
    fn days(c: &CertExpiry) -> String {
        match (c.days_left, &c.error) {
            (Some(days), None) => format!("{days}d"),
            _ => "?".to_string(),
        }
    }

    fn what(c: &CertExpiry) -> String {
        crate::printable::line(&certificate_text(c))
    }

    fn whose(c: &CertExpiry) -> String {
        crate::printable::line(&format!("{}/{}", c.cluster, c.context))
    }

    fn row(
        &self,
        c: &CertExpiry,
        widths: (usize, usize),
        selected: bool,
        width: usize,
    ) -> Line<'static> {
        let s = &self.look.styles;
        let e = self.look.glyphs.ellipsis;
        let (glyph, role) = self.mark(c);
        let what = fit(&Self::what(c), widths.0, e);
        let whose = fit(&Self::whose(c), widths.1, e);
        let head = head(glyph, &Self::days(c), &what, &whose, widths);
        let room = width.saturating_sub(head.width());
        let ends = end_date(c).unwrap_or_else(|| "unreadable".to_string());
        let expires = fit(&ends, room, e);
        let (head_style, rest_style) = if selected {
            (s.get(Role::Selection), s.get(Role::Selection))
        } else {
            (s.get(role), s.get(Role::Muted))
        };
        Line::from(vec![
            Span::styled(head, head_style),
            Span::styled(expires, rest_style),
        ])
    }

    fn header(&self, widths: (usize, usize)) -> Line<'static> {
        let titles = head(" ", "LEFT", "CERTIFICATE", "CLUSTER/CONTEXT", widths);
        Line::from(Span::styled(
            titles + "ENDS",
            self.look.styles.get(Role::Header),
        ))
    }

    fn render_fix(&self, c: &CertExpiry, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let title = format!(" renew: {} of {} ", Self::what(c), Self::whose(c));
        let inner = titled(self.look, title, false, area, buf);
        let lines = vec![
            Line::from(Span::styled(
                format!("ends {}", crate::printable::line(&expires_text(c))),
                s.get(Role::Muted),
            )),
            Line::from(Span::styled(
                crate::printable::line(&renewal(c)),
                s.get(Role::Text),
            )),
        ];
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .render(inner, buf);
    }
}

impl Widget for &CertsPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = &self.look.styles;
        let certs = fleet_certs(self.fleet);
        let near = certs
            .iter()
            .filter(|c| c.verdict != ExpiryVerdict::Ok)
            .count();
        let title = format!(
            " Certificates: {} of {} clusters, soonest end first; {near} within {WARN_DAYS} \
             days ",
            certs.len(),
            self.fleet.clusters.len()
        );
        let inner = titled(self.look, title, true, area, buf);
        if certs.is_empty() {
            let text = "No certificate read yet: the pollers read them with each cluster's \
                        first answer (taloscope certs reads them now).";
            Paragraph::new(Span::styled(text, s.get(Role::Muted)))
                .wrap(Wrap { trim: true })
                .render(inner, buf);
            return;
        }
        let [head, rows, fix] = inner.layout(&Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(FIX_ROWS),
        ]));
        let widest = |f: fn(&CertExpiry) -> String| -> usize {
            certs
                .iter()
                .map(|c| f(c).width())
                .max()
                .unwrap_or(0)
                .min(MAX_COLUMN)
        };
        let widths = (widest(CertsPane::what), widest(CertsPane::whose));
        Paragraph::new(self.header(widths)).render(head, buf);
        let selected = self.screen.selected.min(certs.len() - 1);
        let skip = (selected + 1).saturating_sub(usize::from(rows.height));
        let width = usize::from(inner.width);
        let lines: Vec<Line> = certs
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, c)| self.row(c, widths, i == selected, width))
            .collect();
        Paragraph::new(lines).render(rows, buf);
        self.render_fix(&certs[selected], fix, buf);
    }
}

/// A row up to its end date, the header's too: the mark, the days left and the certificate
/// and its cluster/context, each name padded to its column's `widths`.
fn head(mark: &str, left: &str, what: &str, whose: &str, widths: (usize, usize)) -> String {
    let pad = |text: &str, width: usize| {
        format!("{text}{}", " ".repeat(width.saturating_sub(text.width())))
    };
    let (what, whose) = (pad(what, widths.0), pad(whose, widths.1));
    format!("{mark} {left:>6}  {what}  {whose}  ")
}
