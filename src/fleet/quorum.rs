//! etcd quorum math: how many voting members there are, how many are needed
//! for a majority, and how many more may fail before writes stop. Pure.
use serde::{Deserialize, Serialize};

/// Quorum of one etcd cluster. Learners do not vote and are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Quorum {
    /// Voting members.
    pub members: usize,
    /// Voting members that answered and reported no errors.
    pub healthy: usize,
    /// Majority of the voting members: `members / 2 + 1` (0 when there are none).
    pub needed: usize,
    /// How many more healthy members may fail with quorum kept:
    /// `healthy - needed`, or 0 when quorum is already lost.
    pub tolerates: usize,
}

impl Quorum {
    pub fn from_counts(members: usize, healthy: usize) -> Quorum {
        let healthy = healthy.min(members);
        let needed = if members == 0 { 0 } else { members / 2 + 1 };
        Quorum {
            members,
            healthy,
            needed,
            tolerates: healthy.saturating_sub(needed),
        }
    }

    /// From `(is_learner, healthy)` per member.
    pub fn of_members(members: impl IntoIterator<Item = (bool, bool)>) -> Quorum {
        let (mut voting, mut healthy) = (0, 0);
        for (is_learner, ok) in members {
            if !is_learner {
                voting += 1;
                healthy += usize::from(ok);
            }
        }
        Quorum::from_counts(voting, healthy)
    }

    /// "2 of 3 members healthy, 2 needed".
    pub fn counts_text(&self) -> String {
        format!(
            "{} of {} members healthy, {} needed",
            self.healthy, self.members, self.needed
        )
    }

    /// Whether a majority of voting members is healthy.
    pub fn has_quorum(&self) -> bool {
        self.members > 0 && self.healthy >= self.needed
    }

    /// Whether quorum holds but a voting member is unhealthy, or (of more than one) none may
    /// fail: what the fleet's ETCD cell and the etcd pane warn of.
    pub fn at_risk(&self) -> bool {
        let degraded = self.healthy < self.members || (self.members > 1 && self.tolerates == 0);
        self.has_quorum() && degraded
    }

    /// Whether taking one member down keeps quorum. Taking down a member that
    /// is already unhealthy changes nothing; a healthy one needs `tolerates ≥ 1`.
    pub fn survives_losing(&self, member_healthy: bool) -> bool {
        if member_healthy {
            self.tolerates >= 1
        } else {
            self.has_quorum()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_risk_while_a_voter_is_down_or_none_may_fail() {
        assert!(!Quorum::from_counts(3, 3).at_risk());
        assert!(Quorum::from_counts(3, 2).at_risk());
        assert!(Quorum::from_counts(2, 2).at_risk());
        assert!(!Quorum::from_counts(1, 1).at_risk());
        assert!(!Quorum::from_counts(3, 1).at_risk(), "lost, not at risk");
    }

    #[test]
    fn three_healthy_members_tolerate_one() {
        let q = Quorum::from_counts(3, 3);
        assert_eq!((q.needed, q.tolerates), (2, 1));
        assert!(q.has_quorum() && q.survives_losing(true));
    }

    #[test]
    fn one_of_three_down_tolerates_none() {
        let q = Quorum::from_counts(3, 2);
        assert_eq!((q.needed, q.tolerates), (2, 0));
        assert!(q.has_quorum());
        assert!(!q.survives_losing(true));
        assert!(q.survives_losing(false));
    }

    #[test]
    fn quorum_lost_tolerates_none() {
        let q = Quorum::from_counts(3, 1);
        assert_eq!(q.tolerates, 0);
        assert!(!q.has_quorum());
        assert!(!q.survives_losing(false));
    }

    #[test]
    fn even_member_counts_need_a_strict_majority() {
        assert_eq!(Quorum::from_counts(2, 2).needed, 2);
        assert_eq!(Quorum::from_counts(2, 2).tolerates, 0);
        assert_eq!(Quorum::from_counts(4, 4).needed, 3);
        assert_eq!(Quorum::from_counts(4, 4).tolerates, 1);
        assert_eq!(Quorum::from_counts(5, 5).tolerates, 2);
    }

    #[test]
    fn single_member_and_empty_cluster() {
        let one = Quorum::from_counts(1, 1);
        assert_eq!((one.needed, one.tolerates), (1, 0));
        assert!(one.has_quorum());
        let none = Quorum::from_counts(0, 0);
        assert_eq!((none.needed, none.tolerates), (0, 0));
        assert!(!none.has_quorum());
    }

    #[test]
    fn learners_do_not_vote() {
        let q = Quorum::of_members([(false, true), (false, true), (false, true), (true, true)]);
        assert_eq!((q.members, q.healthy, q.needed, q.tolerates), (3, 3, 2, 1));
        // more healthy than members cannot happen; clamp rather than over-promise
        assert_eq!(Quorum::from_counts(3, 7).healthy, 3);
    }
}
