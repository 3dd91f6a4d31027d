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
    fn at(level: Level, text: impl Into<String>) -> Message {
        let text = text.into();
        Message { level, text }
    }
}
