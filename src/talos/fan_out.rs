//! Bounded client-side fan-out: one call per node, at most `concurrency` at once, results
//! in the nodes' order or as they arrive.
use std::future::Future;

use futures::{Stream, StreamExt, stream};

/// Runs `f` for every node, at most `concurrency` at once; results come back
/// in the order of `nodes`. One slow node delays only its own result.
pub async fn fan_out<T, F, Fut>(nodes: &[String], concurrency: usize, f: F) -> Vec<(String, T)>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = T>,
{
    let mut results: Vec<(usize, String, T)> = fan_out_stream(nodes.to_vec(), concurrency, f)
        .enumerate_nodes(nodes)
        .collect()
        .await;
    results.sort_by_key(|(i, _, _)| *i);
    results.into_iter().map(|(_, n, t)| (n, t)).collect()
}

/// Like [`fan_out`], but yields each node's result as soon as it arrives, for
/// pollers that show partial results.
pub fn fan_out_stream<T, F, Fut>(
    nodes: Vec<String>,
    concurrency: usize,
    f: F,
) -> impl Stream<Item = (String, T)>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = T>,
{
    stream::iter(nodes)
        .map(move |node| {
            let fut = f(node.clone());
            async move { (node, fut.await) }
        })
        .buffer_unordered(concurrency.max(1))
}

trait EnumerateNodes<T>: Stream<Item = (String, T)> + Sized {
    /// Tags each result with its node's position in `nodes` (first unused match).
    fn enumerate_nodes(self, nodes: &[String]) -> impl Stream<Item = (usize, String, T)> {
        let mut taken = vec![false; nodes.len()];
        let nodes = nodes.to_vec();
        self.map(move |(node, t)| {
            let i = (0..nodes.len())
                .find(|&i| !taken[i] && nodes[i] == node)
                .unwrap_or(nodes.len());
            if i < taken.len() {
                taken[i] = true;
            }
            (i, node, t)
        })
    }
}

impl<T, S: Stream<Item = (String, T)>> EnumerateNodes<T> for S {}
