//! What the screens of one node's reading hold and do alike (`config`: its machine
//! configuration, read once per opening and again with `r`; `resources`: what runs inside it,
//! read every few seconds while the screen is on top): the node asked and the reading's
//! number, the latest document and failure, the task the console reads it on
//! (`console::run_node_read`), the news it answers with, and the failure or the wait drawn
//! above the document.
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::app::action::Effect;
use crate::app::message::Message;
use crate::app::screens::{Opening, ScreenName, ScreenNews, ScreenTask, Shared};
use crate::node_resources::NodeIdentity;
use crate::tui::Look;
use crate::views::table::document;

/// One node of one cluster, read for one opening of a screen (or its reading again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRequest {
    pub cluster: String,
    pub node: NodeIdentity,
    /// Which reading asked: news of an earlier one is dropped.
    pub reading: u64,
}

/// What a screen asks of the console (addressed to it, so the console knows what to read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeTask {
    /// Read the node once.
    Read(NodeRequest),
    /// Read it every `Duration` until the screen's Stop or its next task.
    Follow(NodeRequest, Duration),
    Stop,
}

/// One read of the node, or why it failed (the error names the node and the call).
#[derive(Debug, Clone)]
pub struct NodeNews<T> {
    pub reading: u64,
    pub read: Result<T, String>,
}

/// The node a screen shows and its latest read.
#[derive(Debug, Clone)]
pub struct NodeReading<T> {
    pub request: Option<NodeRequest>,
    pub document: Option<T>,
    /// The latest read's failure; the document before it stays on screen.
    pub error: Option<String>,
    /// Whether the console reads the node again and again now.
    following: bool,
}

impl<T> Default for NodeReading<T> {
    fn default() -> NodeReading<T> {
        NodeReading {
            request: None,
            document: None,
            error: None,
            following: false,
        }
    }
}

fn task(screen: ScreenName, task: NodeTask) -> Effect {
    Effect::Screen(ScreenTask::new(screen, task))
}

impl<T: Clone + Send + Sync + 'static> NodeReading<T> {
    /// The node `opening` names (`usage` says how to name one), in a reading numbered after
    /// this one's, nothing read of it yet.
    pub fn open(&self, opening: &Opening, shared: &Shared, usage: &str) -> Result<Self, Message> {
        let (cluster, node) = opening.node(shared, usage)?;
        let reading = self.request.as_ref().map_or(1, |r| r.reading + 1);
        Ok(NodeReading {
            request: Some(NodeRequest {
                cluster: cluster.to_string(),
                node: node.identity(),
                reading,
            }),
            ..NodeReading::default()
        })
    }

    /// A read of the node once, numbered after the one before when `again`.
    pub fn read(&mut self, screen: ScreenName, again: bool) -> Vec<Effect> {
        let Some(request) = self.request.as_mut() else {
            return Vec::new();
        };
        request.reading += u64::from(again);
        vec![task(screen, NodeTask::Read(request.clone()))]
    }

    /// Reads every `every` while the screen is on top; they stop as it leaves.
    pub fn settle(&mut self, screen: ScreenName, every: Duration, on_top: bool) -> Vec<Effect> {
        match (&self.request, on_top, self.following) {
            (Some(request), true, false) => {
                self.following = true;
                vec![task(screen, NodeTask::Follow(request.clone(), every))]
            }
            (_, false, true) => {
                self.following = false;
                vec![task(screen, NodeTask::Stop)]
            }
            _ => Vec::new(),
        }
    }

    /// The news of this reading folded in (a failure keeps the document before it); whether
    /// it was this reading's.
    pub fn on_news(&mut self, news: &ScreenNews) -> bool {
        let Some(news) = news.get::<NodeNews<T>>() else {
            return false;
        };
        if self.request.as_ref().map(|r| r.reading) != Some(news.reading) {
            return false;
        }
        match &news.read {
            Ok(document) => {
                self.document = Some(document.clone());
                self.error = None;
            }
            Err(why) => self.error = Some(why.clone()),
        }
        true
    }

    /// Draws the reading into `area`: the latest read's failure, `waiting` (given the node's
    /// address) until a first document came, then `lines` for the height left.
    pub fn render(
        &self,
        look: &Look,
        waiting: impl FnOnce(&str) -> String,
        lines: impl FnOnce(usize) -> Vec<Line<'static>>,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let address = (self.request.as_ref()).map_or("", |r| r.node.address.as_str());
        let address = crate::printable::line(address);
        let reading = self.document.is_none().then(|| waiting(&address));
        document(look, self.error.as_deref(), reading, lines, area, buf);
    }
}
