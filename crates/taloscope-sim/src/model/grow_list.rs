//! The append-only list that keeps earlier `&[Arc<SimNode>]` views and node (and cluster)
//! indexes valid while nodes and clusters join a running sim.
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::watch;

use super::error::SimError;
use super::state::SimNode;

/// An append-only list (a cluster's nodes, the fleet's clusters). Each push publishes a new
/// generation holding every item so far; older generations stay alive (a few pointers each) so
/// slices handed out earlier never dangle.
pub(crate) struct GrowList<T> {
    first: Generation<T>,
    grow: Mutex<()>,
    joined: watch::Sender<usize>,
}

/// A cluster's nodes.
pub(crate) type NodeList = GrowList<Arc<SimNode>>;

struct Generation<T> {
    items: Box<[T]>,
    next: OnceLock<Box<Generation<T>>>,
}

impl<T: Clone> GrowList<T> {
    pub(crate) fn new(items: Vec<T>) -> GrowList<T> {
        let (joined, _) = watch::channel(items.len());
        GrowList {
            first: Generation {
                items: items.into_boxed_slice(),
                next: OnceLock::new(),
            },
            grow: Mutex::new(()),
            joined,
        }
    }

    fn latest(&self) -> &Generation<T> {
        let mut generation = &self.first;
        while let Some(next) = generation.next.get() {
            generation = next;
        }
        generation
    }

    /// Appends the item `make` builds from the current items (it sees the new item's index as
    /// their count); `make` may refuse, and then nothing changes.
    pub(crate) fn push(
        &self,
        make: impl FnOnce(&[T]) -> Result<T, SimError>,
    ) -> Result<T, SimError> {
        let _one_writer = self.grow.lock().unwrap_or_else(|e| e.into_inner());
        let last = self.latest();
        let item = make(&last.items)?;
        let mut all = last.items.to_vec();
        all.push(item.clone());
        let count = all.len();
        let _ = last.next.set(Box::new(Generation {
            items: all.into_boxed_slice(),
            next: OnceLock::new(),
        }));
        self.joined.send_replace(count);
        Ok(item)
    }

    /// Follows the item count (changes on every push).
    pub(crate) fn subscribe(&self) -> watch::Receiver<usize> {
        self.joined.subscribe()
    }
}

impl<T: Clone> Deref for GrowList<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.latest().items
    }
}
