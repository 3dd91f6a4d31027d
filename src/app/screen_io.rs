//! What addresses a screen module from below it: its name, the IO it asks of the event loop
//! and the news its IO task sends back, each typed by the screen and carried opaquely here.
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A screen module's name: how keys, commands, news and tasks address it.
pub type ScreenName = &'static str;

/// Data a screen's IO task (in `console`) reports to it, typed by the screen.
#[derive(Clone)]
pub struct ScreenNews {
    pub screen: ScreenName,
    pub news: Arc<dyn Any + Send + Sync>,
}

/// IO a screen asks of the event loop, typed by the screen; the console runs it and reports
/// back as [`ScreenNews`].
#[derive(Clone)]
pub struct ScreenTask {
    pub screen: ScreenName,
    pub task: Arc<dyn Any + Send + Sync>,
}

impl ScreenNews {
    pub fn new<T: Any + Send + Sync>(screen: ScreenName, news: T) -> ScreenNews {
        ScreenNews {
            screen,
            news: Arc::new(news),
        }
    }

    pub fn get<T: Any>(&self) -> Option<&T> {
        self.news.downcast_ref()
    }
}

impl ScreenTask {
    pub fn new<T: Any + Send + Sync>(screen: ScreenName, task: T) -> ScreenTask {
        ScreenTask {
            screen,
            task: Arc::new(task),
        }
    }

    pub fn get<T: Any>(&self) -> Option<&T> {
        self.task.downcast_ref()
    }
}

impl fmt::Debug for ScreenNews {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScreenNews({})", self.screen)
    }
}

impl fmt::Debug for ScreenTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScreenTask({})", self.screen)
    }
}
