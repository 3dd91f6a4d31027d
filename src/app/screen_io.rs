//! What addresses a screen module from below it: its name, the IO it asks of the event loop
//! and the news its IO task sends back, each typed by the screen and carried opaquely here.
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A screen module's name: how keys, commands, news and tasks address it.
pub type ScreenName = &'static str;

/// Data a screen's IO task (in `console`) reports to it, typed by the screen.
pub type ScreenNews = Addressed<News>;

/// IO a screen asks of the event loop, typed by the screen; the console runs it and reports
/// back as [`ScreenNews`].
pub type ScreenTask = Addressed<Task>;

/// Which way an [`Addressed`] value goes: to the screen, or from it to the event loop.
#[derive(Debug, Clone)]
pub enum News {}
#[derive(Debug, Clone)]
pub enum Task {}

/// A value typed by screen `screen`, carried opaquely between it and its IO.
#[derive(Clone)]
pub struct Addressed<Way> {
    pub screen: ScreenName,
    body: Arc<dyn Any + Send + Sync>,
    way: PhantomData<Way>,
}

impl<Way> Addressed<Way> {
    pub fn new<T: Any + Send + Sync>(screen: ScreenName, body: T) -> Addressed<Way> {
        Addressed {
            screen,
            body: Arc::new(body),
            way: PhantomData,
        }
    }

    pub fn get<T: Any>(&self) -> Option<&T> {
        self.body.downcast_ref()
    }
}

impl<Way> fmt::Debug for Addressed<Way> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let way = std::any::type_name::<Way>()
            .rsplit("::")
            .next()
            .unwrap_or("");
        write!(f, "Screen{way}({})", self.screen)
    }
}
