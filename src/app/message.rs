//! One line for the operator on the message line, and its level; `:messages`
//! keeps the recent ones.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// Messages the log keeps for `:messages`; older ones are dropped.
pub const MAX_MESSAGES: usize = 100;

/// One line for the operator, shown until the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Level,
    pub text: String,
}

impl Message {
    pub fn info(text: impl Into<String>) -> Message {
        Message::at(Level::Info, text)
    }
    pub fn warn(text: impl Into<String>) -> Message {
        Message::at(Level::Warn, text)
    }
    pub fn error(text: impl Into<String>) -> Message {
        Message::at(Level::Error, text)
    }
    /// What a step that needs the cluster in use says when there is none.
    pub fn no_cluster_in_use() -> Message {
        Message::warn("no cluster in use: Enter on the fleet or :ctx NAME")
    }
    /// What a plan made from `cluster`'s status says before its first poll has answered.
    pub fn no_status_yet(cluster: &str) -> Message {
        Message::warn(format!(
            "no status for {cluster} yet: wait for the first poll (r refreshes)"
        ))
    }
    fn at(level: Level, text: impl Into<String>) -> Message {
        let text = text.into();
        Message { level, text }
    }
}
