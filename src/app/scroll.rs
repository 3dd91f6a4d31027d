//! The operator's place in a step list or an event log that is not a table:
//! none while the list follows what runs (the current step, the newest
//! event); j/k, PgUp/PgDn and g/G set it, and moving back onto the followed
//! line follows again. Views draw the list around it. Pure.
use super::binding::Move;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    at: Option<usize>,
}

impl Scroll {
    /// The line shown selected in a list of `len`: the operator's, else
    /// `follow` (both kept inside the list).
    pub fn at(&self, len: usize, follow: usize) -> usize {
        self.at.unwrap_or(follow).min(len.saturating_sub(1))
    }

    /// Whether the operator moved away from the followed line.
    pub fn is_set(&self) -> bool {
        self.at.is_some()
    }

    /// One move in a list of `len` that follows line `follow`, `page` lines a page.
    pub fn go(&mut self, step: Move, len: usize, follow: usize, page: usize) {
        let last = len.saturating_sub(1);
        let to = step.from(self.at(len, follow), last, page.max(1));
        self.at = (to != follow.min(last)).then_some(to);
    }
}

/// The first line shown of a list of `len` in `room` lines so that line
/// `selected` is on screen (at the bottom when it has to move).
pub fn first_shown(len: usize, room: usize, selected: usize) -> usize {
    (selected + 1)
        .saturating_sub(room.max(1))
        .min(len.saturating_sub(room))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_until_moved_and_again_when_back_on_the_followed_line() {
        let mut s = Scroll::default();
        assert_eq!(s.at(17, 3), 3);
        s.go(Move::Down, 17, 3, 5);
        assert_eq!((s.at(17, 3), s.is_set()), (4, true));
        s.go(Move::PageDown, 17, 3, 5);
        assert_eq!(s.at(17, 3), 9);
        s.go(Move::Last, 17, 3, 5);
        assert_eq!(s.at(17, 3), 16);
        s.go(Move::First, 17, 3, 5);
        assert_eq!(s.at(17, 3), 0);
        s.go(Move::PageDown, 17, 3, 3);
        assert!(!s.is_set(), "back on the followed line: following");
    }

    #[test]
    fn the_selected_line_stays_on_screen() {
        assert_eq!(first_shown(17, 12, 0), 0);
        assert_eq!(first_shown(17, 12, 16), 5);
        assert_eq!(first_shown(5, 12, 4), 0);
    }
}
