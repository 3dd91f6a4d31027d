//! The OCI distribution API, as far as learning releases needs it: a repository's tags
//! (`/v2/<name>/tags/list`, paginated, behind the anonymous token flow). A protocol client:
//! bytes on the wire to typed values; which registry to ask and what the tags mean is above.

mod client;
mod headers;

pub use client::{Registry, RegistryError};
pub use headers::{BearerChallenge, bearer_challenge, next_link};
